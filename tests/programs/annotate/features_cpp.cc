// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * C++ functions whose input features the planner must find (issue 15, spec
 * §4.2.3, §5.2.2, §7.3 item 6): libstdc++ containers by pointer, reference
 * and value (std::vector, std::list, std::map, std::string), a class with a
 * private field through a pointer, a method's `this`, and polymorphic
 * objects whose dynamic type (through the vptr, adjusted by offset-to-top
 * for a non-primary base) selects the derived class's own fields.
 * tests/unit/test_annotate_features_plan.c checks every value printed.
 */
#include <list>
#include <map>
#include <string>
#include <vector>

#include "features_harness.h"

volatile long sink;

struct abstract_class {
	virtual ~abstract_class()
	{
	}
	virtual int get() const = 0;
	int base_value = 1;
};

struct derived_class : abstract_class {
	int private_value = 0;
	int get() const override
	{
		return private_value;
	}
};

struct grand_derived : derived_class {
	long extra = 0;
	int get() const override
	{
		return (int)extra;
	}
};

struct other_base {
	virtual ~other_base()
	{
	}
	long other = 0;
};

struct multi : other_base, abstract_class {
	int m_value = 0;
	int get() const override
	{
		return m_value;
	}
};

namespace whatever
{
struct nsderived : abstract_class {
	double w = 0;
	int get() const override
	{
		return (int)w;
	}
};
} // namespace whatever

class basic_class
{
	int private_field;

      public:
	explicit basic_class(int v) : private_field(v)
	{
	}
	int get(int k) const;
};

TARGET int basic_class::get(int k) const
{
	return private_field + k;
}
/* the method under a C name, for CALL */
extern "C" int basic_class_get(const basic_class *self, int k) __asm__("_ZNK11basic_class3getEi");

TARGET void f_vector(std::vector<int> *t)
{
	sink = (long)t->size();
}

TARGET void f_vector_ref(const std::vector<double> &v)
{
	sink = (long)v.size();
}

TARGET void f_list(std::list<int> &l)
{
	sink = (long)l.size();
}

TARGET void f_map(const std::map<int, int> &m)
{
	sink = (long)m.size();
}

TARGET void f_string(const std::string &s)
{
	sink = (long)s.size();
}

TARGET void f_string_val(std::string s)
{
	sink = (long)s.size();
}

TARGET void f_poly(const abstract_class *c)
{
	sink = c ? c->get() : 0;
}

TARGET void f_poly_ref(const abstract_class &c)
{
	sink = c.get();
}

TARGET void f_class(basic_class *bc)
{
	sink = bc->get(0);
}

extern "C" void run_targets(void)
{
	std::vector<int> vi(6, 1);
	std::vector<double> vd(3, 0.5);
	std::list<int> l = {1, 2, 3, 4};
	std::map<int, int> m = {{1, 1}, {2, 2}};
	std::string s(40, 'x');
	derived_class d;
	grand_derived g;
	multi mm;
	whatever::nsderived ns;
	basic_class bc(33);

	d.private_value = 21;
	g.private_value = 5;
	g.extra = 6;
	mm.other = 70;
	mm.m_value = 71;
	ns.w = 0.5;
	CALL("vector", f_vector, &vi);
	CALL("vector_ref", f_vector_ref, vd);
	CALL("list", f_list, l);
	CALL("map", f_map, m);
	CALL("string", f_string, s);
	CALL("string_val", f_string_val, std::string("abc"));
	CALL("poly_derived", f_poly, &d);
	CALL("poly_grand", f_poly, &g);
	CALL("poly_multi", f_poly, static_cast<abstract_class *>(&mm));
	CALL("poly_ns", f_poly, &ns);
	CALL("poly_null", f_poly, nullptr);
	CALL("poly_ref", f_poly_ref, d);
	CALL("class", f_class, &bc);
	CALL("method", basic_class_get, &bc, 4);
}

int main(int argc, char **argv)
{
	return ann_test_main(argc, argv);
}
