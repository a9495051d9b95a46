"""FOXGLOVE input errors: every bad file names the file, the row and the column."""

from __future__ import annotations

import pytest

from sefora_cli.main import main
from sefora_dataset import CorpusError
from sefora_dataset.foxglove import read_foxglove
from tests.foxglove_fixture import ESSAYS, FEEDBACK, RATINGS_GLOBAL, RATINGS_ITEMS, write_foxglove


def without_column(rows: list[list[str]], name: str) -> list[list[str]]:
    index = [h.strip() for h in rows[0]].index(name)
    return [row[:index] + row[index + 1 :] for row in rows]


def with_cell(rows: list[list[str]], row: int, name: str, value: str) -> list[list[str]]:
    """A copy of ``rows`` with data row ``row`` (1-based) of column ``name`` set to ``value``."""
    index = [h.strip() for h in rows[0]].index(name)
    copy = [list(r) for r in rows]
    copy[row][index] = value
    return copy


CASES = [
    pytest.param(
        {"feedback": without_column(FEEDBACK, "urgency_rank")},
        "feedback.csv: header: missing column(s) 'urgency_rank'",
        id="missing-column",
    ),
    pytest.param(
        {"essay_goals": without_column(ESSAYS, "Essay Contents")},
        "essay_goals.csv: header: missing column(s) 'Essay Contents'",
        id="missing-essay-text",
    ),
    pytest.param(
        {"ratings_items": without_column(RATINGS_ITEMS, "accuracy_position")},
        "ratings_items.csv: header: missing column(s) 'accuracy_position'",
        id="missing-dimension",
    ),
    pytest.param(
        {"feedback": with_cell(FEEDBACK, 3, "urgency_rank", "high")},
        "feedback.csv: row 3, column 'urgency_rank': expected an integer from 1 to 3",
        id="rank-not-a-number",
    ),
    pytest.param(
        {"feedback": with_cell(FEEDBACK, 2, "urgency_rank", "4")},
        "feedback.csv: row 2, column 'urgency_rank': expected an integer from 1 to 3",
        id="rank-out-of-range",
    ),
    pytest.param(
        {"ratings_global": with_cell(RATINGS_GLOBAL, 2, "tone", "4.5")},
        "ratings_global.csv: row 2, column 'tone': expected an integer from 1 to 5",
        id="rating-not-integer",
    ),
    pytest.param(
        {"ratings_items": with_cell(RATINGS_ITEMS, 1, "clarity", "0")},
        "ratings_items.csv: row 1, column 'clarity': expected an integer from 1 to 5",
        id="rating-out-of-range",
    ),
    pytest.param(
        {"feedback": with_cell(FEEDBACK, 5, "essay_id", "E99")},
        "feedback.csv: row 5, column 'essay_id': unknown essay id 'E99'",
        id="unknown-essay-in-feedback",
    ),
    pytest.param(
        {"ratings_global": with_cell(RATINGS_GLOBAL, 1, "essay_id", "E7")},
        "ratings_global.csv: row 1, column 'essay_id': unknown essay id 'E7'",
        id="unknown-essay-in-ratings",
    ),
    pytest.param(
        {"essay_goals": [*ESSAYS, ["E01", "Again.", "Claim", "Claim", "Claim"]]},
        "essay_goals.csv: row 3, column 'essay_id': repeated id 'E01'",
        id="repeated-essay",
    ),
    pytest.param(
        {"essay_goals": with_cell(ESSAYS, 2, "goal_3", " ")},
        "essay_goals.csv: row 2, column 'goal_3': must not be empty",
        id="empty-goal",
    ),
    pytest.param(
        {"feedback": with_cell(FEEDBACK, 4, "feedback_content", "")},
        "feedback.csv: row 4, column 'feedback_content': must not be empty",
        id="empty-comment",
    ),
    pytest.param(
        {"feedback": [*FEEDBACK, ["E01", "human", "R1", "Claim"]]},
        "feedback.csv: row 10: has 4 fields, the header has 7",
        id="short-row",
    ),
    pytest.param(
        {"ratings_global": [[*RATINGS_GLOBAL[0], "tone"], *RATINGS_GLOBAL[1:]]},
        "ratings_global.csv: header: column(s) given twice: tone",
        id="repeated-column",
    ),
]


@pytest.mark.parametrize("replace, message", CASES)
def test_bad_files_are_named_with_row_and_column(tmp_path, replace, message):
    source = write_foxglove(tmp_path / "src", **replace)
    with pytest.raises(CorpusError) as caught:
        read_foxglove(source)
    assert str(caught.value).startswith(str(source / message.split(":")[0]))
    assert message in str(caught.value)


def test_missing_file_and_folder(tmp_path):
    source = write_foxglove(tmp_path / "src")
    (source / "ratings_items.csv").unlink()
    with pytest.raises(CorpusError, match=r"ratings_items\.csv: file not found"):
        read_foxglove(source)
    with pytest.raises(CorpusError, match="not a folder"):
        read_foxglove(tmp_path / "nowhere")


def test_not_utf8(tmp_path):
    source = write_foxglove(tmp_path / "src")
    (source / "feedback.csv").write_bytes(b"essay_id,model\n\xff\xfe bad\n")
    with pytest.raises(CorpusError, match=r"feedback\.csv: not a readable UTF-8 CSV"):
        read_foxglove(source)


def test_undocumented_columns_are_ignored_with_a_warning(tmp_path, caplog):
    extra = [[*FEEDBACK[0], "notes"], *[[*row, "x"] for row in FEEDBACK[1:]]]
    source = write_foxglove(tmp_path / "src", feedback=extra)
    assert len(read_foxglove(source).comments) == len(FEEDBACK) - 1
    assert "ignoring undocumented column(s): notes" in caplog.text


def test_cli_reports_one_line_and_exit_2(tmp_path, capsys):
    source = write_foxglove(tmp_path / "src", feedback=with_cell(FEEDBACK, 5, "essay_id", "E99"))
    code = main(["build-foxglove", "--source", str(source), "--out", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unknown essay id 'E99'" in err
    assert not (tmp_path / "o").exists()
