"""`pipeline models [NAME]`: the list, one model, an unknown NAME, and --models files whose
wrong rows are said on stderr while the other models are listed."""

from __future__ import annotations

from tests.helpers import invoke


def test_the_list_and_one_model():
    result = invoke("models")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("name")
    assert "llama3.1-405b" in result.stdout and result.stderr == ""
    one = invoke("models", "Meta-Llama/Meta-Llama-3-70B")
    assert one.exit_code == 0 and one.stdout.splitlines()[0].split() == ["name", "llama3-70b"]


def test_an_unknown_name_is_exit_1_with_a_did_you_mean():
    result = invoke("models", "lama3-8b")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: unknown model 'lama3-8b' (did you mean 'llama3-8b'?)\n"


def test_a_models_file_adds_and_its_wrong_rows_are_said(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("name,D,F,N,K,H,L,V\nsmall,64,8,4,2,16,2,100\nbad,64,8,4,3,16,2,100\n")
    result = invoke("models", "--models", path)
    assert result.exit_code == 1
    assert "small" in result.stdout and "bad" not in result.stdout
    assert result.stderr == (
        f"{path}:3: column K: model 'bad': 3 does not divide N = 4; K (KV heads) divides N "
        "(query heads): one of 1, 2, 4\n"
    )
    good = invoke("models", "small", "--models", path)
    assert good.stdout.splitlines()[0].split() == ["name", "small"]


def test_an_unreadable_models_file_is_an_error(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("name,heads\nm,4\n")
    result = invoke("models", "--models", path)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"Error: {path}: unknown column 'heads'; the columns are")
