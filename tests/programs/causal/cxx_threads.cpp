// SPDX-License-Identifier: GPL-3.0-or-later
//
// C++ threads: a work queue with std::mutex and std::condition_variable
// (wait with a predicate, wait_for with a timeout, notify_one/notify_all),
// std::shared_mutex readers and writers, std::async and std::atomic.
// Prints a checksum that does not depend on scheduling.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <future>
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <thread>
#include <vector>

#include <lever.h>

namespace
{

constexpr int producers = 2;
constexpr int consumers = 3;
constexpr int items_per_producer = 4000;

std::mutex queue_lock;
std::condition_variable not_empty;
std::condition_variable not_full;
std::queue<std::uint64_t> items;
bool closed = false;

std::shared_mutex table_lock;
std::vector<std::uint64_t> table(64);

std::atomic<std::uint64_t> checksum{0};
std::atomic<unsigned> timeouts_seen{0};

__attribute__((noinline)) std::uint64_t work(std::uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

void produce(int id)
{
	for (int i = 0; i < items_per_producer; i++) {
		std::unique_lock<std::mutex> l(queue_lock);
		not_full.wait(l, [] { return items.size() < 32; });
		items.push(static_cast<std::uint64_t>(id) << 32 | static_cast<unsigned>(i));
		l.unlock();
		not_empty.notify_one();
	}
}

void consume()
{
	std::uint64_t sum = 0;

	for (;;) {
		std::unique_lock<std::mutex> l(queue_lock);
		while (items.empty() && !closed) {
			if (not_empty.wait_for(l, std::chrono::milliseconds(2)) ==
			    std::cv_status::timeout)
				timeouts_seen++;
		}
		if (items.empty())
			break;
		std::uint64_t v = items.front();
		items.pop();
		l.unlock();
		not_full.notify_one();

		std::uint64_t r = work(v);
		{
			std::shared_lock<std::shared_mutex> rl(table_lock);
			r ^= table[v % table.size()] & 0;
		}
		if (v % 97 == 0) {
			std::unique_lock<std::shared_mutex> wl(table_lock);
			table[v % table.size()] += 1;
		}
		sum += r;
		LEVER_PROGRESS;
	}
	checksum += sum;
}

} // namespace

int main()
{
	std::vector<std::thread> threads;

	for (int i = 0; i < consumers; i++)
		threads.emplace_back(consume);
	for (int i = 0; i < producers; i++)
		threads.emplace_back(produce, i);
	for (int i = consumers; i < consumers + producers; i++)
		threads[i].join();
	{
		std::lock_guard<std::mutex> g(queue_lock);
		closed = true;
	}
	not_empty.notify_all();
	for (int i = 0; i < consumers; i++)
		threads[i].join();

	auto side = std::async(std::launch::async, [] { return work(12345); });
	std::uint64_t table_sum = 0;
	for (auto v : table)
		table_sum += v;
	std::printf("checksum %016llx, table %llu, side %016llx\n",
		    static_cast<unsigned long long>(checksum.load()),
		    static_cast<unsigned long long>(table_sum),
		    static_cast<unsigned long long>(side.get()));
	return 0;
}
