"""Docs generated from code are up to date, and their promises hold."""

from __future__ import annotations

from umbrella_env.core import actions as A
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.tools import gendocs


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
