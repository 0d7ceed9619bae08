"""MetaQA question parsing and answer reachability over walk tables."""

import pyarrow as pa

from kgwalk.eval.metaqa import AnswerReachability, load_questions
from kgwalk.kg.ids import hash64
from kgwalk.walks import WalkSpec, all_walks

from conftest import graph_from


def test_questions_and_reachability(tmp_path):
    qa = tmp_path / "qa.txt"
    qa.write_text(
        "who directed [Kismet]\tWilliam Dieterle\n"
        "what did [William Dieterle] direct\tKismet|Juarez\n"
        "who wrote [Kismet]\tEdward Knoblock\n"
        "what genre is [Juarez]\tDrama\n"
    )
    questions = load_questions(qa)
    assert questions[1].topic == hash64("William Dieterle")
    assert questions[1].answers == {hash64("Kismet"), hash64("Juarez")}
    graph = graph_from([("Kismet", "directed_by", "William Dieterle"), ("Juarez", "directed_by", "William Dieterle")])
    walks = all_walks(graph, WalkSpec(depth=2))
    reach = AnswerReachability(questions)
    reach.add(walks.slice(0, 0))
    assert reach.share == 0.0
    for batch in walks.to_batches(max_chunksize=2):  # batches may split a root's walks
        reach.add(pa.Table.from_batches([batch]))
    assert reach.reached.tolist() == [True, True, False, False]  # no writer and no genre in the graph
    assert reach.share == 0.5
