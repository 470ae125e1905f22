// SPDX-License-Identifier: GPL-3.0-or-later
//
// The seed's Appendix A micro-benchmark (spec/freud.md §6.6), C++ half: the
// five functions whose features live in C++ objects — a private field
// through a pointer (A.7), a small class passed by value in registers (A.8),
// a std::vector's size as finish - start (A.9), a field of the dynamic type
// behind an abstract reference (A.10), and two dynamic types, one two levels
// deep, as the partition (A.18). The seed does not print its class
// definitions; these are the smallest that make its code mean what its
// text says. See appendix_a.c for the cost unit and the driver.
#include <cstdlib>
#include <vector>

#include "appendix_a.h"

#define TESTED __attribute__((noipa))

class basic_class
{
	int private_field;
	int useless_field;

      public:
	basic_class(int f, int u) : private_field(f), useless_field(u)
	{
	}
	int get_private_field() const
	{
		return private_field;
	}
	int get_useless_field() const
	{
		return useless_field;
	}
};

// Two ints: passed by value in one register under the x86-64 ABI.
class fit_in_register
{
	int single_int;
	int other_int;

      public:
	fit_in_register(int s, int o) : single_int(s), other_int(o)
	{
	}
	int get_int() const
	{
		return single_int;
	}
	int get_other() const
	{
		return other_int;
	}
};

class abstract_class_1
{
      public:
	virtual ~abstract_class_1()
	{
	}
	virtual int get_pv() const = 0;
};

// The root of A.18's hierarchy; derived_class is one level below it,
// grand_derived_class2 two (through derived_class2).
class abstract_class_2 : public abstract_class_1
{
      public:
	virtual int level() const = 0;
};

class derived_class : public abstract_class_2
{
	int private_value;

      public:
	explicit derived_class(int v) : private_value(v)
	{
	}
	int get_pv() const override
	{
		return private_value;
	}
	int level() const override
	{
		return 1;
	}
};

class derived_class2 : public abstract_class_2
{
      protected:
	int private_value2;

      public:
	explicit derived_class2(int v) : private_value2(v)
	{
	}
	int level() const override
	{
		return 1;
	}
};

class grand_derived_class2 : public derived_class2
{
      public:
	explicit grand_derived_class2(int v) : derived_class2(v)
	{
	}
	int get_pv() const override
	{
		return private_value2;
	}
	int level() const override
	{
		return 2;
	}
};

// A.7: a private field of a class, through a pointer.
TESTED void test_linear_classes(basic_class *bc)
{
	int pf = bc->get_private_field();
	for (int i = 0; i < pf; i++)
		appendix_a_cost(150);
}

// A.8: a small class by value, packed in a register.
TESTED void test_linear_fitinregister(fit_in_register fir)
{
	int pf = fir.get_int();
	for (int i = 0; i < pf; i++)
		appendix_a_cost(150);
}

// A.9: a std::vector's size, the derived feature finish - start.
TESTED void test_linear_vector(std::vector<int> *t)
{
	for (std::size_t i = 0; i < t->size(); i++)
		appendix_a_cost(250);
}

// A.10: the feature is in the dynamic type, not in the static one.
TESTED void test_derived_class(const abstract_class_1 &c)
{
	const derived_class &dc = dynamic_cast<const derived_class &>(c);
	appendix_a_cost((unsigned long)dc.get_pv());
}

// A.18: the dynamic type selects the model.
TESTED void test_grand_derived_class2(const abstract_class_2 *c)
{
	const grand_derived_class2 *gdc = dynamic_cast<const grand_derived_class2 *>(c);
	if (gdc)
		appendix_a_cost((unsigned long)gdc->get_pv());
	const derived_class *dc = dynamic_cast<const derived_class *>(c);
	if (dc)
		appendix_a_cost((unsigned long)(2000 - dc->get_pv()));
}

extern "C" void appendix_a_cxx_round(int t)
{
	basic_class bc(t, rand());
	fit_in_register fir(t, rand());
	std::vector<int> v((std::size_t)t, 1);
	derived_class d(rand() % 1987);
	int pv = rand() % 1987;

	if (appendix_a_wanted("test_linear_classes"))
		test_linear_classes(&bc);
	if (appendix_a_wanted("test_linear_fitinregister"))
		test_linear_fitinregister(fir);
	if (appendix_a_wanted("test_linear_vector"))
		test_linear_vector(&v);
	if (appendix_a_wanted("test_derived_class"))
		test_derived_class(d);
	if (!appendix_a_wanted("test_grand_derived_class2"))
		return;
	// the seed's driver alternates the two dynamic types
	if ((t / 2) % 2) {
		grand_derived_class2 g(pv);
		test_grand_derived_class2(&g);
	} else {
		derived_class dd(pv);
		test_grand_derived_class2(&dd);
	}
}
