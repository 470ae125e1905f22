// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * C++ class layouts for `lever layout refs --all-structs`, checked against
 * pahole (tests/e2e/layout_static_pahole.sh): base classes (pinned leading
 * members named <ancestor>), the vtable pointer, an empty base that takes no
 * room, namespaces, a template instance.
 */
#include <cstdint>

namespace shapes
{
struct Base {
	long id;
	int kind;
};

struct Empty {
};

class Shape : public Empty, public Base
{
      public:
	virtual ~Shape()
	{
	}
	virtual double area() const
	{
		return 0;
	}
	double x, y;
	char tag;
};

struct Pair2 : Base {
	Base second;
	short s;
};
} // namespace shapes

template <typename T> struct Box {
	T value;
	int count;
};

shapes::Shape g_shape;
shapes::Pair2 g_pair;
Box<double> g_box;
Box<char> g_small_box;

int main()
{
	return (int)g_shape.area() + g_pair.s + g_box.count + g_small_box.count;
}
