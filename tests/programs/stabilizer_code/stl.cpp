// SPDX-License-Identifier: GPL-3.0-or-later
// C++ with templates (COMDAT sections), virtual calls, std::function,
// lambdas, iostream and the STL containers, under code randomization.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
	virtual std::string name() const = 0;
};

struct Rect : Shape {
	double w, h;
	Rect(double a, double b) : w(a), h(b)
	{
	}
	double area() const override
	{
		return w * h;
	}
	std::string name() const override
	{
		return "rect";
	}
};

struct Circle : Shape {
	double r;
	explicit Circle(double x) : r(x)
	{
	}
	double area() const override
	{
		return 3.14159 * r * r;
	}
	std::string name() const override
	{
		return "circle";
	}
};

template <typename T> static T sum_squares(const std::vector<T> &v)
{
	return std::accumulate(v.begin(), v.end(), T{}, [](T acc, T x) { return acc + x * x; });
}

int main()
{
	std::vector<std::unique_ptr<Shape>> shapes;
	std::map<std::string, double> totals;
	std::function<int(int)> collatz = [&](int n) {
		return n == 1 ? 0 : 1 + collatz(n % 2 ? 3 * n + 1 : n / 2);
	};
	long steps = 0;

	for (int round = 0; round < 200; round++) {
		shapes.clear();
		for (int i = 0; i < 50; i++) {
			if (i % 3)
				shapes.push_back(std::make_unique<Rect>(i, round % 7 + 1));
			else
				shapes.push_back(std::make_unique<Circle>(i % 5 + 0.5));
		}
		std::sort(shapes.begin(), shapes.end(),
			  [](const auto &a, const auto &b) { return a->area() < b->area(); });
		for (const auto &s : shapes)
			totals[s->name()] += s->area();
		for (int n = 1; n < 60; n++)
			steps += collatz(n);
		if (round % 40 == 0)
			std::this_thread::sleep_for(std::chrono::milliseconds(3));
	}
	std::vector<long> v(1000);
	std::iota(v.begin(), v.end(), 1);
	std::ostringstream out;
	out.precision(10);
	for (const auto &t : totals)
		out << t.first << ' ' << t.second << '\n';
	std::cout << out.str() << "steps " << steps << "\nsquares " << sum_squares(v) << '\n';
	return 0;
}
