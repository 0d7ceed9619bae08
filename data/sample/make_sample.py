"""Recreate metaqa_sample.txt: the MetaQA triples of every movie linked to three seed people,
plus up to five other movies of each of their actors (a connected slice for 2-hop questions).

    python data/sample/make_sample.py ../shared/data/metaqa/kb.txt > data/sample/metaqa_sample.txt
"""

import sys
from collections import defaultdict

SEEDS = ["William Dieterle", "Emir Kusturica", "Akira Kurosawa"]
OTHER_MOVIES_PER_ACTOR = 5


def main(kb_path: str) -> None:
    lines = [line.rstrip("\n") for line in open(kb_path, encoding="utf-8")]
    by_head: dict[str, list[str]] = defaultdict(list)
    heads_of: dict[str, set[str]] = defaultdict(set)
    for line in lines:
        head, rel, tail = line.split("|")
        by_head[head].append(line)
        heads_of[tail].add(head)
    movies = set().union(*(heads_of[s] for s in SEEDS))
    actors = {line.split("|")[2] for m in movies for line in by_head[m] if line.split("|")[1] == "starred_actors"}
    for actor in sorted(actors):
        movies |= set(sorted(heads_of[actor] - movies)[:OTHER_MOVIES_PER_ACTOR])
    for movie in sorted(movies):
        for line in by_head[movie]:
            print(line)


if __name__ == "__main__":
    main(sys.argv[1])
