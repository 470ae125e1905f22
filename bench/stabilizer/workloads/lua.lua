-- SPDX-License-Identifier: GPL-3.0-or-later
-- The lua workload of bench/stabilizer/programs.sh: tables, strings,
-- closures, coroutines, metatables and the garbage collector, N steps.
-- Everything printed is deterministic: no addresses, no pairs() order over
-- string keys (the string hash seed differs per run), no timings.
local n = tonumber(arg[1]) or 10000

local seed = 42
local function rand(m)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % m
end

-- Tables and sorting with a comparator.
local items = {}
for i = 1, n do
  items[i] = { key = rand(1000000), name = string.format("item%06d", rand(999983)) }
end
table.sort(items, function(a, b)
  if a.key ~= b.key then return a.key < b.key end
  return a.name < b.name
end)
local sum = 0
for i = 1, #items, 97 do sum = (sum * 31 + items[i].key) % 1000000007 end
print("sorted", #items, items[1].key, items[#items].key, sum)

-- Strings: building, patterns, gsub, formatting.
local parts = {}
for i = 1, n // 4 do parts[#parts + 1] = string.format("%d:%x:%.3f", i, i * 7, i / 7) end
local text = table.concat(parts, ";")
local count = 0
for a, b in text:gmatch("(%d+):(%x+)") do count = count + #a + #b end
local replaced = text:gsub("%d%d%d", function(d) return d:reverse() end)
print("strings", #text, count, #replaced, replaced:sub(1, 40))

-- Word counts, printed in sorted order.
local words = {}
for i = 1, n do
  local w = "w" .. rand(500)
  words[w] = (words[w] or 0) + 1
end
local keys = {}
for k in pairs(words) do keys[#keys + 1] = k end
table.sort(keys)
local line = {}
for i = 1, 10 do line[i] = keys[i] .. "=" .. words[keys[i]] end
print("words", #keys, table.concat(line, " "))

-- Closures and coroutines.
local function counter(step)
  local c = 0
  return function() c = c + step; return c end
end
local total = 0
for i = 1, 200 do
  local f = counter(i)
  for _ = 1, n // 200 do total = total + f() end
end
local gen = coroutine.wrap(function()
  local a, b = 0, 1
  for _ = 1, n do
    coroutine.yield(a)
    a, b = b, (a + b) % 1000000007
  end
end)
local fib = 0
for _ = 1, n do fib = (fib + gen()) % 1000000007 end
print("closures", total, fib)

-- Metatables: a small vector type.
local V = {}
V.__index = V
V.__add = function(a, b) return setmetatable({ x = a.x + b.x, y = a.y + b.y }, V) end
V.__mul = function(a, k) return setmetatable({ x = a.x * k, y = a.y * k }, V) end
local acc = setmetatable({ x = 0, y = 0 }, V)
for i = 1, n do acc = acc + setmetatable({ x = i % 13, y = i % 7 }, V) * 0.5 end
print("vectors", string.format("%.2f %.2f", acc.x, acc.y))

-- Garbage: many short-lived tables, then a full collection.
local keep = {}
for i = 1, n do
  local t = { i, tostring(i), { i * 2 } }
  if i % 100 == 0 then keep[#keep + 1] = t end
end
collectgarbage("collect")
local ks = 0
for _, t in ipairs(keep) do ks = ks + t[1] + t[3][1] + #t[2] end
print("garbage", #keep, ks)

-- Floating point and integer math.
local fsum, isum = 0.0, 0
for i = 1, n do
  fsum = fsum + math.sin(i) * math.sqrt(i) / (1 + math.log(i))
  isum = (isum + i * i ~ (i << 3)) % 4294967291
end
print("math", string.format("%.9g", fsum), isum, utf8.char(955, 8364), utf8.len("λ€x"))
