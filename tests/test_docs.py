"""Docs generated from code are up to date, and their promises hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from umbrella_env.core import actions as A
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.tools import gendocs

ROOT = Path(__file__).resolve().parents[1]


def test_generated_docs_are_up_to_date() -> None:
    for name, make in gendocs.GENERATED.items():
        on_disk = (gendocs.DOCS / name).read_text(encoding="utf-8")
        assert on_disk == make(), f"docs/{name} is stale: run python -m umbrella_env.tools.gendocs"


def test_action_doc_lists_every_id_with_its_string() -> None:
    text = (gendocs.DOCS / "actions.md").read_text(encoding="utf-8")
    for a in (0, A.FALLBACK_START, A.VALIDATE_START + 13, A.SWAP_STAGE_PASS, A.SWAP_ZONE_PASS, A.NUM_ACTIONS - 1):
        assert f"| {a} | {A.phase_of_action(a)} | `{A.action_to_string(a)}` |" in text
    assert f"**{A.NUM_ACTIONS}**" in text


def test_observation_doc_states_the_size() -> None:
    text = (gendocs.DOCS / "observation.md").read_text(encoding="utf-8")
    assert f"**{OBS_SIZE}**" in text
    assert f"| {OBS_SIZE - 4} | {OBS_SIZE} | `last_colour` |" in text


def test_the_agent_guide_example_plays_through_a_factory_spec(tmp_path, monkeypatch) -> None:
    """docs/agents.md's example agent, saved as the guide says, is a working spec."""
    import re

    from umbrella_env.core.config import GameConfig
    from umbrella_env.match import AgentSpecError, build_agent, play_game

    guide = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    (tmp_path / "my_agents.py").write_text(blocks[1], encoding="utf-8")
    config = GameConfig(num_players=2)
    with pytest.raises(AgentSpecError, match="the module must be importable by this Python: add its folder to"):
        build_agent("my_agents:one_step", config, seed=1)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AgentSpecError) as typo:  # the module is found: no word of the path
        build_agent("my_agents:onestep", config, seed=1)
    assert "has no attribute 'onestep'" in str(typo.value) and "PYTHONPATH" not in str(typo.value)
    agents = [build_agent("my_agents:one_step", config, seed=1), build_agent("random", config, seed=2)]
    first = play_game(agents, config, seed=3, names=["my_agents:one_step", "random"])
    assert first.turns > 0 and play_game(agents, config, seed=3) == first  # seeded through reset()
