#!/usr/bin/env python3
"""Random graphs for the GNN example: how far apart are two marked nodes?

usage: make_data.py COUNT SEED

Each line is one graph: `kinds` gives every node's kind (0 plain, 1 and 2
the two marked nodes), `src` and `dst` its edges (each undirected edge both
ways), and `distance` the class of the shortest path between the marked
nodes: 0 to 3 for a distance of 1 to 4, and 4 for 5 or more or no path at
all. Graphs have 8 to 16 nodes and 1.25 edges a node; the classes are
drawn uniformly, so always guessing one class scores 20%.
"""
import json
import random
import sys
from collections import deque

CLASSES = 5


def random_graph(rng):
    n = rng.randint(8, 16)
    edges = set()
    while len(edges) < n + n // 4:
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            edges.add((min(a, b), max(a, b)))
    return n, sorted(edges)


def distances(n, edges, start):
    neighbours = [[] for _ in range(n)]
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    far = [None] * n
    far[start] = 0
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in neighbours[v]:
            if far[w] is None:
                far[w] = far[v] + 1
                queue.append(w)
    return far


def distance_class(d):
    return CLASSES - 1 if d is None or d >= CLASSES else d - 1


def example(rng):
    wanted = rng.randrange(CLASSES)
    while True:
        n, edges = random_graph(rng)
        a = rng.randrange(n)
        far = distances(n, edges, a)
        candidates = [b for b in range(n) if b != a and distance_class(far[b]) == wanted]
        if candidates:
            b = rng.choice(candidates)
            break
    kinds = [0] * n
    kinds[a], kinds[b] = 1, 2
    src = [x for a_, b_ in edges for x in (a_, b_)]
    dst = [x for a_, b_ in edges for x in (b_, a_)]
    return {"kinds": kinds, "src": src, "dst": dst, "distance": wanted}


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    for _ in range(count):
        print(json.dumps(example(rng)))


if __name__ == "__main__":
    main()
