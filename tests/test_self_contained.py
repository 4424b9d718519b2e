"""The repository stands on its own.

The rules live in ``docs/rules.md``; nothing in the repository may send a reader to a
file outside it, every section ("§4.2") and decision ("decision 9") that code and docs
cite must exist on that page, every link to a file of the repository must resolve, and
the component data printed on the rules page must be the data the engine plays with.

Files checked: every text file git knows (tracked, or new and not ignored); without git,
every file under the repository root outside hidden and build directories.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from umbrella_env.core.components import COLOUR_NAMES, COLOURS, components_from_dict, default_components

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"

# References to places outside the repository.  Written in two pieces so that this file
# does not match itself.
OUTSIDE = (
    "../" + "shared",  # the sibling directory the specification once lived in
    "shared/" + "RULES",
    "RULES" + ".md",  # the old specification's name, in any form
    "/" + "work/",  # an absolute path of the development machine
    "/" + "tmp/",  # a scratch path of one machine (tests use pytest's tmp_path)
)
_SKIP_DIRS = {"__pycache__", "build", "dist", "runs", "checkpoints", "tb", "out", "venv"}


def _walk_into(folder: str) -> bool:
    """Without git: the hidden folders worth checking are CI's; skip caches and builds."""
    if folder.startswith("."):
        return folder in (".ci", ".github")
    return folder not in _SKIP_DIRS and not folder.endswith(".egg-info")


@lru_cache(maxsize=1)
def text_files() -> tuple[tuple[str, str], ...]:
    """(path relative to the root, text) of every text file of the repository."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        )
        names = sorted({n for n in out.stdout.decode("utf-8").split("\0") if n})
    except (OSError, subprocess.SubprocessError):
        names = []
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if _walk_into(d)]
            names += [str(Path(folder, f).relative_to(ROOT)) for f in files]
        names.sort()
    found = []
    for name in names:
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree but still in the index
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            found.append((Path(name).as_posix(), data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return tuple(found)


def _lines(text: str):
    return enumerate(text.splitlines(), start=1)


def test_the_file_list_is_complete() -> None:
    names = {name for name, _ in text_files()}
    for expected in ("README.md", "docs/rules.md", "umbrella_env/core/reference.py", "tests/test_self_contained.py"):
        assert expected in names, f"{expected} is missing from the files checked"


def test_no_reference_to_paths_outside_the_repository() -> None:
    hits = [
        f"{name}:{n}: {line.strip()}"
        for name, text in text_files()
        for n, line in _lines(text)
        if any(s in line for s in OUTSIDE)
    ]
    assert not hits, (
        f"{len(hits)} line(s) point outside the repository (the rules are docs/rules.md, cited as "
        "'docs/rules.md §N'):\n" + "\n".join(hits)
    )


# --------------------------------------------------------------------------- citations
def rules_sections() -> set[str]:
    """Section numbers of docs/rules.md: '4' from '## 4. A turn', '4.2' from '### 4.2 ...'."""
    return set(re.findall(r"^#{2,4} (\d+(?:\.\d+)*)\.? ", RULES.read_text(encoding="utf-8"), re.M))


def rules_decisions() -> set[int]:
    """Numbers of the decisions docs/rules.md records ('**Decision 9 (setup redraw).**')."""
    return {int(n) for n in re.findall(r"\*\*Decision (\d+) ", RULES.read_text(encoding="utf-8"))}


_SECTION = re.compile(r"§(\d+(?:\.\d+)*)")
_NUMBER_OR_RANGE = r"\d+(?:\s*[-–]\s*\d+)?"
_DECISIONS = re.compile(rf"\b[Dd]ecisions? ({_NUMBER_OR_RANGE}(?:\s*(?:,|and)\s*{_NUMBER_OR_RANGE})*)")


def _numbers(text: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*(?:,|and)\s*", text):
        lo, _, hi = part.partition("-") if "-" in part else part.partition("–")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def test_rules_page_has_the_sections_it_promises() -> None:
    sections = rules_sections()
    # The numbering of the specification it replaces: §1-§9, §3.1-§3.5, §4.1-§4.4.
    for expected in [str(n) for n in range(1, 10)] + [f"3.{k}" for k in range(1, 6)] + [f"4.{k}" for k in range(1, 5)]:
        assert expected in sections, f"docs/rules.md has no section {expected}"
    assert rules_decisions() == set(range(1, 16))


def test_every_section_citation_exists() -> None:
    """Every "§N" anywhere in the repository cites docs/rules.md (the only page with
    numbered sections), so every one must name a section of it."""
    sections = rules_sections()
    bad = [
        f"{name}:{n}: §{s} in: {line.strip()}"
        for name, text in text_files()
        for n, line in _lines(text)
        for s in _SECTION.findall(line)
        if s not in sections
    ]
    assert not bad, f"citations of sections docs/rules.md does not have (it has {sorted(sections)}):\n" + "\n".join(bad)


def test_every_decision_citation_exists() -> None:
    decisions = rules_decisions()
    bad = [
        f"{name}:{n}: decision {d} in: {line.strip()}"
        for name, text in text_files()
        for n, line in _lines(text)
        for group in _DECISIONS.findall(line)
        for d in _numbers(group)
        if d not in decisions
    ]
    assert not bad, f"citations of decisions docs/rules.md does not record (1-{max(decisions)}):\n" + "\n".join(bad)


def test_links_to_repository_files_resolve() -> None:
    """Relative Markdown links, and ``docs/<name>.md`` mentions in code, name existing files."""
    bad = []
    for name, text in text_files():
        for n, line in _lines(text):
            if name.endswith(".md"):
                for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", line):
                    if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                        continue
                    if not (ROOT / name).parent.joinpath(target).exists():
                        bad.append(f"{name}:{n}: link to {target}")
            elif name.endswith(".py"):
                for target in re.findall(r"\bdocs/[\w.-]+\.md\b", line):
                    if not (ROOT / target).exists():
                        bad.append(f"{name}:{n}: mentions {target}")
    assert not bad, "references to files that do not exist:\n" + "\n".join(bad)


# --------------------------------------------------------------------------- component data
def _rules_section(number: str) -> str:
    """The text of one section of docs/rules.md, up to the next heading of any level."""
    text = RULES.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(number)}\.? .*?$(.*?)(?=^#|\Z)", text, re.M | re.S)
    assert match, f"docs/rules.md has no section {number}"
    return match.group(1)


def test_rules_page_prints_the_engine_figure_catalogue() -> None:
    rows = re.findall(r"^\|\s*(\d+) \| `([.X/]+)` \| `([.X/]+)` \|$", _rules_section("6.1"), re.M)
    assert [(int(t), w, b) for t, w, b in rows] == [(t, w, b) for t, (w, b) in enumerate(default_components().tiles)]


def test_rules_page_prints_the_engine_stage_layouts() -> None:
    row = r"^\| ([A-Z]) \| ([BGRY]{4}) \| ([BGRY]{4}) \| ([BGRY]{4}) \| ([BGRY]{4}) \|$"
    rows = re.findall(row, _rules_section("6.2"), re.M)
    assert {name: tuple(r) for name, *r in rows} == dict(default_components().layouts)


def test_rules_page_prints_the_engine_plates() -> None:
    cs = default_components()
    row = r"^\| (\d) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$"
    rows = {
        int(level): (top.split() + bottom.split(), bonus)
        for level, top, bottom, bonus in re.findall(row, _rules_section("7.2"), re.M)
    }
    assert sorted(rows) == [1, 2, 3, 4]
    for level, plate in cs.plates.items():
        spaces, bonus = rows[level]
        assert tuple(spaces) == plate.spaces, f"level {level}"
        if plate.groups is not None and level == 1:
            for group, value in plate.groups:
                assert f"{{{', '.join(map(str, group))}}} +{value}" in bonus
        if plate.adjacency_bonus is not None:
            assert " / ".join(f"+{v}" for v in plate.adjacency_bonus) in bonus
    assert cs.plates[2].groups == cs.plates[1].groups  # "the same fixed groups as level 1"
    powers = _rules_section("7.4")
    names = {"extra_turn": "extra turn", "swap_stage": "stage swap", "swap_zone": "zone swap"}
    for power, (a, b) in cs.plates[4].powers.items():
        assert f"**{names[power]}**, between spaces {a} and {b}" in powers


def test_rules_page_states_the_engine_token_counts() -> None:
    cs = default_components()
    counts = f"{cs.supply[2]} / {cs.supply[3]} / {cs.supply[4]}"
    assert counts in _rules_section("1") and counts in _rules_section("3.5")
    assert f"{cs.solo_tokens} score tokens" in _rules_section("8.1")
    assert ", ".join(f"{name} `{letter}`" for name, letter in zip(COLOUR_NAMES, COLOURS)) in _rules_section("1")


def test_component_file_examples_load() -> None:
    text = (ROOT / "docs" / "components.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(json|toml)\n(.*?)```", text, re.S)
    assert [lang for lang, _ in blocks] == ["json", "toml"]
    for lang, body in blocks:
        data = json.loads(body) if lang == "json" else tomllib.loads(body)
        cs = components_from_dict(data)
        assert cs.reserve == data["reserve"] and set(cs.layouts) == set(data["layouts"])
