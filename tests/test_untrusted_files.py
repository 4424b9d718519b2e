"""Files a user receives from others (a checkpoint, its sidecar, a component file, a state):
a damaged or crafted one is refused with an error naming it, before it can take memory or
time, never with a traceback from inside a library (review of security, helper agent)."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from umbrella_env.core.components import load_components
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ComponentError, StateError
from umbrella_env.core.jsonio import parse_json
from umbrella_env.core.serialize import state_from_json, state_to_json
from umbrella_env.core.single import SingleGame

SHIPPED = Path(__file__).resolve().parents[1] / "agents" / "models"
DEEP = "[" * 100_000 + "]" * 100_000
LONG_NUMBER = "1" * 5_000


@pytest.mark.parametrize(
    ("text", "words"),
    [(DEEP, "JSON nested too deeply"), (LONG_NUMBER, "not valid JSON (Exceeds the limit"), ("{", "Expecting")],
)
def test_every_refusal_of_json_text_is_a_short_value_error(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=r"^" + words.replace("(", r"\(")) as info:
        parse_json(text)
    assert "set_int_max_str_digits" not in str(info.value)  # not Python's advice to raise the limit


def test_a_state_or_a_component_file_of_crafted_json_gets_the_projects_error(tmp_path: Path) -> None:
    for text in (DEEP, LONG_NUMBER):
        with pytest.raises(StateError, match=r"^state: not valid JSON \((JSON nested|Exceeds)"):
            state_from_json(text)  # a number past the digit limit was a plain ValueError
        f = tmp_path / "components.json"
        f.write_text(text, encoding="utf-8")
        with pytest.raises(ComponentError, match="is not valid JSON"):  # it was a RecursionError
            load_components(f)
    f = tmp_path / "components.toml"  # tomllib recurses too (diff review)
    f.write_text(f"x = {DEEP}\n", encoding="utf-8")
    with pytest.raises(ComponentError, match="is not valid TOML: nested too deeply"):
        load_components(f)


def test_a_runs_progress_lines_of_crafted_json_are_refused_naming_them(tmp_path: Path) -> None:
    """rllib_train --resume reads the run's progress lines: a RecursionError before."""
    from umbrella_env.rllib_train import _progress_rows

    (tmp_path / "progress.jsonl").write_text(DEEP + "\n" + '{"iteration": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1 of the run's progress '.*progress\.jsonl' is not one"):
        _progress_rows(tmp_path / "progress.jsonl", 1)


@pytest.mark.train
def test_a_ppo_runs_summary_of_crafted_json_is_refused_naming_it(tmp_path: Path) -> None:
    from umbrella_env.training.ppo import previous_summary

    (tmp_path / "train_summary.json").write_text(DEEP, encoding="utf-8")
    with pytest.raises(ValueError, match=r"the run's summary '.*train_summary\.json' is unreadable"):
        previous_summary(tmp_path / "last.zip")


def _copy_shipped(tmp_path: Path, name: str = "az-2p") -> tuple[Path, dict]:
    model = tmp_path / f"{name}.pt"
    shutil.copyfile(SHIPPED / f"{name}.pt", model)
    meta = json.loads((SHIPPED / f"{name}.json").read_text(encoding="utf-8"))
    del meta["sha256"]  # a crafted file comes with a sidecar that does not pin it
    return model, meta


@pytest.mark.train
@pytest.mark.parametrize("extra", [DEEP, LONG_NUMBER])
def test_a_sidecar_of_crafted_json_is_refused_naming_it(tmp_path: Path, extra: str) -> None:
    from agents import make_agent

    model, meta = _copy_shipped(tmp_path)
    text = json.dumps(meta)[:-1] + f', "x": {extra}}}'
    model.with_suffix(".json").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"metadata '.*az-2p\.json' is unreadable"):  # a RecursionError before
        make_agent(str(model))


@pytest.mark.train
def test_a_sidecar_of_too_many_layers_is_refused_before_allocating_them(tmp_path: Path) -> None:
    from agents import make_agent
    from agents.checks import MAX_LAYERS

    model, meta = _copy_shipped(tmp_path)
    model.with_suffix(".json").write_text(json.dumps({**meta, "hidden": [64] * (MAX_LAYERS + 1)}), encoding="utf-8")
    with pytest.raises(ValueError, match=f"'hidden' must be a list of 1 to {MAX_LAYERS} layer sizes"):
        make_agent(str(model))


@pytest.mark.train
def test_the_weights_a_sidecar_describes_are_compared_before_they_are_allocated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 layers of 8,192 (allowed sizes) are 4.3 GB of float32: the network was built, then
    compared with the file's weights, which do not match."""
    from agents import make_agent
    from agents.az import net
    from agents.checks import MAX_LAYER_SIZE, MAX_LAYERS

    built: list[str] = []

    class Recorded(net.AZNet):  # type: ignore[misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            built.append(next(self.parameters()).device.type)

    monkeypatch.setattr(net, "AZNet", Recorded)
    model, meta = _copy_shipped(tmp_path)
    model.with_suffix(".json").write_text(
        json.dumps({**meta, "hidden": [MAX_LAYER_SIZE] * MAX_LAYERS}), encoding="utf-8"
    )
    with pytest.raises(ValueError, match="does not match its sidecar"):
        make_agent(str(model))
    assert built == ["meta"]  # the shapes only: no weights allocated for a file that does not fit
    model.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
    make_agent(str(model))
    assert built == ["meta", "meta", "cpu"]  # a file that fits: then the network itself


@pytest.mark.train
def test_a_torch_file_with_compressed_records_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    from agents import make_agent

    model, meta = _copy_shipped(tmp_path)
    packed = tmp_path / "packed.pt"
    with zipfile.ZipFile(model) as src, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    packed.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds a compressed record \(az-2p/"):
        make_agent(str(packed))
    model.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
    assert make_agent(str(model)) is not None  # the same records stored, as torch.save writes them


@pytest.mark.train
def test_too_many_hidden_layers_on_the_command_line_are_refused() -> None:
    from agents.checks import MAX_LAYERS
    from umbrella_env.training.options import check_layers

    check_layers("--hidden", [64] * MAX_LAYERS)
    with pytest.raises(ValueError, match=f"--hidden: at most {MAX_LAYERS} hidden layers, got {MAX_LAYERS + 1}"):
        check_layers("--hidden", [64] * (MAX_LAYERS + 1))


def test_a_key_given_twice_in_json_is_refused_as_in_toml(tmp_path: Path) -> None:
    """JSON kept the last of two values of a key, silently, where TOML refuses it (env API
    audit, 2026-12-07): a state or component file with a key twice was read as the other."""
    with pytest.raises(ValueError, match=r"^not valid JSON \(the key 'reserve' is given twice in one object\)$"):
        parse_json('{"reserve": 5, "reserve": 30}')
    assert parse_json('[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]  # one key in each of two objects
    with pytest.raises(ValueError, match=re.escape("the key 'a;b' is given twice")):  # not cut at its ';'
        parse_json('{"a;b": 1, "a;b": 2}')
    f = tmp_path / "components.json"
    f.write_text('{"reserve": 5, "reserve": 30}', encoding="utf-8")
    with pytest.raises(ComponentError, match="given twice"):
        load_components(f)
    text = state_to_json(SingleGame.new(GameConfig(num_players=2), 0).to_dict())
    assert '"turn": 0' in text
    with pytest.raises(StateError, match=r"^state: not valid JSON \(the key 'turn' is given twice in one object\)$"):
        state_from_json(text.replace('"turn": 0', '"turn": 0, "turn": 1', 1))
