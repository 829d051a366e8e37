#!/usr/bin/env python3
"""Medians of a bench script's results, per group of rows.

    medians.py FILE KEYS NAME...

Each line of FILE is KEYS words naming its group, then one number per NAME.
Prints, per group in sorted order, the median of each number over the group's
rows, with its NAME, and how many rows the group had."""
import statistics
import sys

path, keys, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
groups = {}
for line in open(path):
    words = line.split()
    groups.setdefault(tuple(words[:keys]), []).append([float(v) for v in words[keys:]])
for group, rows in sorted(groups.items()):
    medians = (statistics.median(column) for column in zip(*rows))
    figures = "  ".join(f"{name} {value:.3f}" for name, value in zip(names, medians))
    print(f"median {' '.join(group):20} {figures}  ({len(rows)} runs)")
