"""ONNX export (umbrella_env.export) and the torch-free agent (agents.onnx_agent).

A tiny training run writes a checkpoint whose weights are then redrawn (seeded) so that the
logits spread over several units: parity at 1e-5 then means something, which it would not
on the near-zero logits of a fresh policy head.  The tests that need torch are marked
``train``.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from agents import BatchAgent, make_agent
from agents.checkpoint import file_sha256
from agents.onnx_agent import MASKED_LOGIT, OnnxAgent, sample_masked
from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.observation import OBS_SIZE as OBS
from umbrella_env.core.observation import observe
from umbrella_env.core.playout import policy_actions

MODELS = Path(__file__).resolve().parents[1] / "agents" / "models"

REPO = Path(__file__).resolve().parents[1]
PARITY_POSITIONS = 1000
#: The decision phases the parity positions must cover (every phase but game_over).
DECISION_PHASES = tuple(p for p in A.PHASES if p != "game_over")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(checkpoint .zip, exported .onnx) of a 2-player level-1 run, weights redrawn."""
    import torch
    from sb3_contrib import MaskablePPO

    from umbrella_env import export
    from umbrella_env.training import ppo

    out = tmp_path_factory.mktemp("onnx") / "run"
    options = (
        "--players 2 --timesteps 64 --n-envs 2 --eval-every 1000000 --eval-games 1 "
        "--eval-opponent random --opponents random --max-turns 20 --no-progress --torch-threads 1"
    )
    assert ppo.main([*options.split(), "--out", str(out)]) == 0
    checkpoint = out / "last.zip"
    model = MaskablePPO.load(checkpoint, device="cpu")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 2 / max(1, p.shape[-1]) ** 0.5)
    model.save(checkpoint)  # the .json sidecar written by training stays beside it, with the new file's hash
    sidecar = checkpoint.with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**meta, "sha256": file_sha256(checkpoint)}))
    onnx_path = out / "last.onnx"
    assert export.main([str(checkpoint), str(onnx_path), "--check-positions", "64"]) == 0
    return checkpoint, onnx_path


def phase_positions(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` (observation, mask, phase) triples from seeded games of every configuration
    (solo and 2-4 players, levels 1-4), as evenly spread over the decision phases as they come.

    Some games start near their end or with the player's zones emptied
    (:func:`umbrella_env.tools.differential.late_start` / ``stress_start``) so that covers,
    fallback slides and level-4 swaps happen.
    """
    from umbrella_env.tools.differential import late_start, stress_start

    rng = np.random.default_rng(seed)
    obs, masks, phases = [], [], []
    for players in (1, 2, 3, 4):
        for level in (1, 2, 3, 4):
            state = E.init(GameConfig(num_players=players, plate_level=level, max_turns=60), 16, seed=rng)
            for b in range(16):
                d = batch_io.to_dict(state, b)
                if b % 2:
                    d = late_start(d, rng)
                if players > 1 and b % 4 == 0:
                    d = stress_start(d)
                batch_io.load_dict(state, b, d)
            for _ in range(40):
                live = np.flatnonzero(~state.done)
                if not live.size:
                    break
                obs.append(observe(state)[live])
                masks.append(E.legal_action_mask(state)[live])
                phases.append(state.phase[live].astype(np.int64))
                E.step(state, policy_actions(state, rng, 0.9))
    all_obs, all_masks, all_phases = np.concatenate(obs), np.concatenate(masks), np.concatenate(phases)
    order = rng.permutation(len(all_phases))
    quota = count // len(DECISION_PHASES)
    taken = np.zeros(len(order), dtype=bool)
    per_phase: Counter[int] = Counter()
    for i in order:  # an even share of each phase first, then the rest in random order
        if per_phase[all_phases[i]] < quota:
            per_phase[all_phases[i]] += 1
            taken[i] = True
    chosen = np.concatenate([order[taken[order]], order[~taken[order]]])[:count]
    return all_obs[chosen], all_masks[chosen], all_phases[chosen]


@pytest.mark.train
def test_onnxruntime_reproduces_the_torch_policy_in_every_phase(exported) -> None:
    import torch

    from agents.onnx_agent import OnnxAgent
    from agents.policy import PolicyAgent
    from umbrella_env.export import MaskablePPONet, masked_outputs

    checkpoint, onnx_path = exported
    obs, masks, phases = phase_positions(PARITY_POSITIONS)
    counts = Counter(A.PHASES[p] for p in phases)
    assert len(obs) == PARITY_POSITIONS and set(counts) == set(DECISION_PHASES), counts

    torch_agent = PolicyAgent(checkpoint)
    policy = torch_agent.model.policy
    want_logits, want_values = masked_outputs(MaskablePPONet(policy), obs, masks)
    onnx_agent = OnnxAgent(onnx_path)
    got_logits, got_values = onnx_agent.evaluate(obs, masks)
    assert got_logits.dtype == np.float32 and got_logits.shape == (PARITY_POSITIONS, A.NUM_ACTIONS)
    assert got_values.shape == (PARITY_POSITIONS,)
    assert np.ptp(want_logits[masks]) > 5  # the redrawn weights give spread-out logits
    logit_diff = np.abs(got_logits - want_logits)[masks]
    value_diff = np.abs(got_values - want_values)
    assert logit_diff.max() < 1e-5 and value_diff.max() < 1e-5
    assert (got_logits[~masks] == MASKED_LOGIT).all() and (want_logits[~masks] == MASKED_LOGIT).all()

    # The adapter computes what sb3-contrib's policy computes: its masked distribution and value.
    with torch.no_grad():
        obs_t = torch.as_tensor(obs)
        sb3_log_probs = policy.get_distribution(obs_t, action_masks=masks).distribution.logits.numpy()
        sb3_values = policy.predict_values(obs_t).numpy()[:, 0]
    shifted = got_logits.astype(np.float64) - got_logits.max(1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    assert np.abs(log_probs - sb3_log_probs)[masks].max() < 1e-4
    assert np.abs(got_values - sb3_values).max() < 1e-5

    # The same actions: PolicyAgent (torch, sb3's predict) and OnnxAgent, both deterministic;
    # both are the BatchAgent that a type checker is told to narrow make_agent's Agent to.
    assert isinstance(torch_agent, BatchAgent) and isinstance(onnx_agent, BatchAgent)
    assert not isinstance(make_agent("heuristic"), BatchAgent)
    torch_actions = torch_agent.act_batch(obs, masks)
    onnx_actions = onnx_agent.act_batch(obs, masks)
    np.testing.assert_array_equal(onnx_actions, torch_actions)
    assert masks[np.arange(PARITY_POSITIONS), onnx_actions].all()
    assert [onnx_agent.act(obs[i], masks[i].astype(np.int8)) for i in range(50)] == torch_actions[:50].tolist()


@pytest.mark.train
def test_checkpoint_agents_copy_and_take_an_empty_batch(exported, tmp_path, monkeypatch) -> None:
    """OnnxAgent could not be pickled or deep-copied (its onnxruntime session), so it could
    not go to a worker; PolicyAgent.act_batch raised torch's reshape error on 0 positions."""
    import copy
    import pickle

    from agents.onnx_agent import OnnxAgent
    from agents.policy import PolicyAgent

    checkpoint, onnx_path = exported
    obs, masks, _ = phase_positions(32)
    for agent in (OnnxAgent(onnx_path, deterministic=False, seed=3), PolicyAgent(checkpoint, deterministic=False)):
        for clone in (pickle.loads(pickle.dumps(agent)), copy.deepcopy(agent)):
            agent.reset(5)
            clone.reset(5)
            np.testing.assert_array_equal(clone.act_batch(obs, masks), agent.act_batch(obs, masks))
        empty = agent.act_batch(np.zeros((0, obs.shape[1]), np.float32), np.zeros((0, A.NUM_ACTIONS), bool))
        assert empty.shape == (0,) and empty.dtype == np.int64
    monkeypatch.chdir(onnx_path.parent)  # built from a relative path, copied in another folder (a worker's)
    blob = pickle.dumps(OnnxAgent(onnx_path.name))
    monkeypatch.chdir(tmp_path)
    np.testing.assert_array_equal(pickle.loads(blob).act_batch(obs, masks), OnnxAgent(onnx_path).act_batch(obs, masks))


@pytest.mark.train
def test_checkpoint_agents_check_the_game_they_are_given(exported) -> None:
    """The .zip and .onnx agents play from the observation, but a game given to them is
    checked as the alphazero agents check it: its configuration, its mask, its type (they
    played a 3-player game with a 2-player model without a word)."""
    from umbrella_env.core.single import SingleGame

    checkpoint, onnx_path = exported
    g2, g3 = SingleGame.new(GameConfig(num_players=2), 6), SingleGame.new(GameConfig(num_players=3), 6)
    for spec in (str(checkpoint), str(onnx_path)):
        agent = make_agent(spec)
        assert g2.legal_mask()[agent.act(g2.observe(g2.actor), g2.legal_mask(), g2)]
        with pytest.raises(ValueError, match="trained for num_players=2, but this game has num_players=3"):
            agent.act(g3.observe(g3.actor), g3.legal_mask(), g3)
        stale = g2.legal_mask().copy()
        stale[np.flatnonzero(~stale)[0]] = True
        with pytest.raises(ValueError, match="action_mask is not the legal actions of the game"):
            agent.act(g2.observe(g2.actor), stale, g2)
        with pytest.raises(TypeError, match="game must be a SingleGame"):
            agent.act(g2.observe(g2.actor), g2.legal_mask(), g2.to_dict())
    with pytest.raises(ValueError, match="action_mask is not the legal actions of the game"):
        make_agent("random").act(g2.observe(g2.actor), stale, g2)


@pytest.mark.train
def test_a_sampling_policy_agent_draws_from_its_own_generator(exported) -> None:
    """A sampling .zip agent used SB3's process-wide seeding: a second agent rewound or
    disturbed the first one's samples, and building one reseeded NumPy's global stream."""
    from agents.policy import PolicyAgent

    checkpoint, _ = exported
    obs, masks, _ = phase_positions(16, seed=3)

    def samples(agent, others=()):
        out = []
        for o, m in zip(obs, masks):
            out.append(agent.act(o, m))
            for other in others:
                other.act(o, m)
        return out

    alone = samples(PolicyAgent(checkpoint, deterministic=False, seed=4))
    first = PolicyAgent(checkpoint, deterministic=False, seed=4)
    np.random.seed(0)
    expected_global = np.random.rand()
    np.random.seed(0)
    second = PolicyAgent(checkpoint, deterministic=False, seed=99)  # built after the first
    assert np.random.rand() == expected_global  # the global stream is untouched
    assert samples(first, [second]) == alone
    assert all(m[a] for a, m in zip(alone, masks))  # legal draws
    assert samples(PolicyAgent(checkpoint, deterministic=False, seed=5)) != alone  # the seed matters
    batch = PolicyAgent(checkpoint, deterministic=False, seed=4).act_batch(obs, masks)
    assert batch.dtype == np.int64 and all(m[a] for a, m in zip(batch, masks))


@pytest.mark.train
def test_metadata_travels_with_the_model_and_another_configuration_is_refused(exported, tmp_path) -> None:
    import onnx

    import umbrella_env
    from agents import make_agent
    from agents.onnx_agent import OnnxAgent, decode_metadata
    from agents.policy import PolicyAgent

    checkpoint, onnx_path = exported
    model = onnx.load(str(onnx_path))
    props = decode_metadata({p.key: p.value for p in model.metadata_props})
    sidecar = json.loads(checkpoint.with_suffix(".json").read_text())
    same = [k for k in sidecar if k not in ("sha256", "umbrella_env_version")]
    assert {k: props[k] for k in same} == {k: sidecar[k] for k in same}
    assert "sha256" not in props and props["source_sha256"] == sidecar["sha256"]  # the .zip's, named as such
    assert props["num_players"] == 2 and props["plate_level"] == 1
    assert props["source_checkpoint"] == "last.zip" and len(props["source_sha256"]) == 64
    assert props["umbrella_env_version"] == umbrella_env.__version__
    # the version that wrote the checkpoint travels beside the exporter's, not replaced by it
    assert props["source_umbrella_env_version"] == sidecar["umbrella_env_version"]
    from umbrella_env.export import source_metadata

    older = source_metadata({**sidecar, "umbrella_env_version": "0.1.0"}, checkpoint)
    assert older["source_umbrella_env_version"] == "0.1.0" and "umbrella_env_version" not in older

    agent = make_agent(str(onnx_path), num_players=2, plate_level=1, seed=3)
    assert isinstance(agent, OnnxAgent) and agent.meta["num_players"] == 2
    for kwargs in ({"num_players": 3}, {"plate_level": 4}):
        with pytest.raises(ValueError) as from_zip:
            PolicyAgent(checkpoint, **kwargs)
        with pytest.raises(ValueError) as from_onnx:
            make_agent(str(onnx_path), **kwargs)
        # The same words for both formats, only the file differs.
        assert str(from_onnx.value) == str(from_zip.value).replace(str(checkpoint), str(onnx_path))
        assert "was trained for" in str(from_onnx.value)

    def rewrite(name: str, change: dict[str, str], drop: str | None = None) -> Path:
        copy = onnx.load(str(onnx_path))
        kept = {p.key: p.value for p in copy.metadata_props if p.key != drop}
        del copy.metadata_props[:]
        onnx.helper.set_model_props(copy, {**kept, **change})
        onnx.save(copy, str(tmp_path / name))
        return tmp_path / name

    with pytest.raises(ValueError, match="observation size 898 and 968 actions; this umbrella-env has 899"):
        OnnxAgent(rewrite("small.onnx", {"obs_size": "898"}))
    with pytest.raises(ValueError, match="lacks 'plate_level'"):
        OnnxAgent(rewrite("nolevel.onnx", {}, drop="plate_level"))
    with pytest.raises(ValueError, match="not written by python -m umbrella_env.export"):
        OnnxAgent(rewrite("foreign.onnx", {}, drop="format"))
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="could not be loaded by onnxruntime"):
        OnnxAgent(tmp_path / "junk.onnx")
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(str(tmp_path / "missing.onnx"))


@pytest.mark.train
def test_a_sidecar_that_is_not_its_models_or_not_sound_is_refused(exported, tmp_path, capsys) -> None:
    """A .zip was not tied to its sidecar (a solo model beside a 2-player sidecar played 2-player
    games); a sidecar's player count was not checked (7 exported an .onnx, then a traceback;
    "2" was refused as "trained for num_players=2, but this game has num_players=2"); a
    sidecar that is not UTF-8 raised UnicodeDecodeError."""
    from sb3_contrib import MaskablePPO

    from agents.policy import PolicyAgent
    from umbrella_env import export

    checkpoint, _ = exported
    meta = json.loads(checkpoint.with_suffix(".json").read_text())

    def pair(name: str, sidecar: bytes, retrain: bool = False) -> Path:
        path = tmp_path / f"{name}.zip"
        path.write_bytes(checkpoint.read_bytes())
        if retrain:  # another model saved in its place, the sidecar left as it was
            model = MaskablePPO.load(path, device="cpu")
            model.policy.action_net.bias.data += 1
            model.save(path)
        path.with_suffix(".json").write_bytes(sidecar)
        return path

    sidecar = json.dumps(meta).encode()
    cases = [
        (pair("swapped", sidecar, retrain=True), "(its SHA-256 differs): the file was changed or damaged"),
        (
            pair("seven", json.dumps({**meta, "num_players": 7}).encode()),
            "'num_players' must be an integer from 1 to 4, got 7",
        ),
        (
            pair("text", json.dumps({**meta, "num_players": "2"}).encode()),
            "'num_players' must be an integer from 1 to 4, got '2'",
        ),
        (pair("latin", b'{"a": "\xff\xfe"}'), "is unreadable (expected UTF-8 JSON)"),
    ]
    for path, words in cases:
        with pytest.raises(ValueError) as info:
            PolicyAgent(path)
        assert words in str(info.value) and "\n" not in str(info.value), str(info.value)
        exit_info_code = export.main([str(path), str(tmp_path / f"{path.stem}.onnx")])
        assert exit_info_code == 2 and words in capsys.readouterr().err
        assert not (tmp_path / f"{path.stem}.onnx").exists()  # seven was written, then refused
    assert PolicyAgent(pair("same", sidecar)).meta["num_players"] == 2  # a copy of both files is the model


@pytest.mark.train
def test_a_checkpoint_of_the_first_release_loads_and_plays_the_same(exported, tmp_path, monkeypatch) -> None:
    """0.1.0 pickled its figure features as ``umbrella_env.policy_features.FigureFeatures``
    (now ``agents.features``): its default checkpoints were refused everywhere with
    "No module named 'umbrella_env.policy_features'"; they load again, and play the same."""
    import sys
    import types

    from agents import features
    from agents.policy import load_model

    old = types.ModuleType("umbrella_env.policy_features")

    class FigureFeatures(features.FigureFeatures):  # the class as 0.1.0 named it
        pass

    FigureFeatures.__module__, FigureFeatures.__qualname__ = old.__name__, "FigureFeatures"
    old.FigureFeatures = FigureFeatures  # type: ignore[attr-defined]
    model = load_model(exported[0])
    model.policy_kwargs["features_extractor_class"] = FigureFeatures
    path = tmp_path / "old.zip"
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, old.__name__, old)
        model.save(path)
    assert b"umbrella_env.policy_features" in __import__("zipfile").ZipFile(path).read("data")
    loaded = load_model(path)
    assert loaded.policy.features_extractor.__class__ is features.FigureFeatures
    assert "umbrella_env.policy_features" not in sys.modules  # the old name is not left behind
    obs, masks, _ = phase_positions(32)
    want, _ = model.predict(obs, action_masks=masks, deterministic=True)
    got, _ = loaded.predict(obs, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(got, want)
    # train.py --resume loads it a second time, itself (it ended in the same traceback)
    from umbrella_env.training import ppo

    meta = json.loads(exported[0].with_suffix(".json").read_text())
    path.with_suffix(".json").write_text(json.dumps({**meta, "sha256": file_sha256(path)}))
    options = (
        f"--players 2 --timesteps {loaded.num_timesteps + 64} --n-envs 2 --eval-every 1000000 --eval-games 1 "
        "--eval-opponent random --opponents random --max-turns 20 --no-progress --torch-threads 1"
    )
    assert ppo.main([*options.split(), "--resume", str(path), "--out", str(tmp_path / "resumed")]) == 0


@pytest.mark.train
def test_loading_a_zip_leaves_the_process_generators_alone(exported) -> None:
    """MaskablePPO.load seeded Python's, NumPy's and torch's global generators with the seed in
    the file (and building the network drew from torch's): every self-play snapshot of a
    training run restarted its random streams."""
    import random

    import torch

    from agents.policy import PolicyAgent, load_model

    def draws() -> tuple:
        return random.random(), np.random.random(), float(torch.rand(1))

    for load in (lambda: load_model(exported[0]), lambda: PolicyAgent(exported[0])):
        for seed in (123, 999):
            random.seed(seed), np.random.seed(seed), torch.manual_seed(seed)
            expected = draws()
            random.seed(seed), np.random.seed(seed), torch.manual_seed(seed)
            load()
            assert draws() == expected


@pytest.mark.train
def test_an_onnx_model_of_other_inputs_or_outputs_is_refused_when_loaded(tmp_path) -> None:
    """Names were checked, not types or shapes: a model reading float64 observations failed
    at its first move inside onnxruntime, one of 5 logits played actions 0-4 only."""
    import onnx
    from onnx import TensorProto, helper

    from agents.onnx_agent import INPUT_NAMES, ONNX_FORMAT, OUTPUT_NAMES, encode_metadata

    def model(name: str, obs_type: int = TensorProto.FLOAT, logits: int = A.NUM_ACTIONS) -> Path:
        inputs = [
            helper.make_tensor_value_info(INPUT_NAMES[0], obs_type, ["N", 899]),
            helper.make_tensor_value_info(INPUT_NAMES[1], TensorProto.BOOL, ["N", A.NUM_ACTIONS]),
        ]
        outputs = [
            helper.make_tensor_value_info(OUTPUT_NAMES[0], TensorProto.FLOAT, ["N", logits]),
            helper.make_tensor_value_info(OUTPUT_NAMES[1], TensorProto.FLOAT, ["N"]),
        ]
        axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
        ends = helper.make_tensor("ends", TensorProto.INT64, [1], [logits])
        zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
        nodes = [
            helper.make_node("Cast", [INPUT_NAMES[1]], ["maskf"], to=TensorProto.FLOAT),
            helper.make_node("Slice", ["maskf", "zero", "ends", "axes"], [OUTPUT_NAMES[0]]),
            helper.make_node("Cast", [INPUT_NAMES[0]], ["obsf"], to=TensorProto.FLOAT),
            helper.make_node("ReduceSum", ["obsf", "axes"], [OUTPUT_NAMES[1]], keepdims=0),
        ]
        graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=[axes, ends, zero])
        proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        proto.ir_version = 8
        meta = {"format": ONNX_FORMAT, "num_players": 2, "plate_level": 1, "obs_size": 899, "num_actions": 968}
        helper.set_model_props(proto, encode_metadata(meta))
        onnx.save(proto, str(tmp_path / name))
        return tmp_path / name

    assert OnnxAgent(model("sound.onnx")).meta["num_players"] == 2  # the test's model is otherwise sound
    with pytest.raises(ValueError, match=r"has 'observation' of tensor\(double\) \['N', 899\]; expected tensor\(fl"):
        OnnxAgent(model("double.onnx", obs_type=TensorProto.DOUBLE))
    with pytest.raises(
        ValueError, match=r"has 'logits' of tensor\(float\) \['N', 5\]; expected tensor\(float\) \[batch, 968\]"
    ):
        OnnxAgent(model("five.onnx", logits=5))


@pytest.mark.train
def test_export_takes_a_shipped_models_name(tmp_path) -> None:
    """A wheel's user has no agents/models/ of a clone to type: ``export az-2p OUT``."""
    import onnx

    from agents.onnx_agent import decode_metadata
    from umbrella_env import export

    out = tmp_path / "az-2p.onnx"
    assert export.main(["az-2p", str(out), "--check-positions", "8"]) == 0
    props = decode_metadata({p.key: p.value for p in onnx.load(str(out)).metadata_props})
    assert props["source_checkpoint"] == "az-2p.pt" and props["num_players"] == 2
    agent = make_agent(str(out), num_players=2, plate_level=1, seed=0)
    assert agent.meta["source_sha256"] == props["source_sha256"]


@pytest.mark.train
def test_export_command_refuses_bad_input(exported, tmp_path, capsys) -> None:
    from umbrella_env import export

    checkpoint, _ = exported
    (tmp_path / "weights.h5").write_bytes(b"")
    (tmp_path / "folder.onnx").mkdir()
    for argv, message in [
        ([str(tmp_path / "nope.zip"), str(tmp_path / "x.onnx")], "does not exist"),
        (
            [str(tmp_path / "weights.h5"), str(tmp_path / "x.onnx")],
            "must be a .zip or .pt written by training, or a shipped model's name (az-2p, ",
        ),
        ([str(tmp_path / "nope.pt"), str(tmp_path / "x.onnx")], "does not exist"),
        ([str(checkpoint), str(tmp_path / "x.pb")], "expected a file name ending in .onnx"),
        # refused before loading (it used to export, then fail on the folder: a traceback)
        (
            [str(checkpoint), str(tmp_path / "folder.onnx")],
            "output: '" + str(tmp_path / "folder.onnx") + "' is a folder",
        ),
        ([str(checkpoint), str(tmp_path / "no" / "x.onnx")], "does not exist"),
        # checked before the export (it used to export, then fail writing: a traceback)
        *(
            [([str(checkpoint), "/proc/x.onnx"], "'/proc' does not take a new file or folder")]
            if Path("/proc/self").is_dir()
            else []
        ),
        (
            [str(checkpoint), str(tmp_path / "x.onnx"), "--check-positions", "-1"],
            "--check-positions must be an integer from 0 to 100,000, got -1",
        ),
        # no limit: 1e8 positions ran for ever, 20,000 took 6 GB
        (
            [str(checkpoint), str(tmp_path / "x.onnx"), "--check-positions", "100001"],
            "--check-positions must be an integer from 0 to 100,000",
        ),
        (
            [str(checkpoint), str(tmp_path / "x.onnx"), "--opset", "9"],
            "--opset must be an integer from 14 to 20, got 9",
        ),
        # a network that reads the heuristic's action values needs the game, not only the observation
        ([str(MODELS / "az-2p-net.pt"), str(tmp_path / "x.onnx")], "cannot be exported to ONNX"),
    ]:
        info_code = export.main(argv)
        assert info_code == 2, argv
        assert message in capsys.readouterr().err, argv
    assert not (tmp_path / "x.onnx").exists()
    (tmp_path / "kept.onnx").write_bytes(b"an earlier export")  # replaced only when asked
    info_code = export.main([str(checkpoint), str(tmp_path / "kept.onnx")])
    assert info_code == 2 and "already exists: give another name, or --overwrite" in capsys.readouterr().err
    assert (tmp_path / "kept.onnx").read_bytes() == b"an earlier export"
    assert export.main([str(checkpoint), str(tmp_path / "kept.onnx"), "--overwrite", "--check-positions", "8"]) == 0
    assert OnnxAgent(tmp_path / "kept.onnx").meta["num_players"] == 2
    (tmp_path / "foreign.zip").write_bytes(b"not a zip")  # no sidecar
    info_code = export.main([str(tmp_path / "foreign.zip"), str(tmp_path / "x.onnx")])
    assert info_code == 2 and "has no metadata file" in capsys.readouterr().err


@pytest.mark.train
@pytest.mark.parametrize("module", ["onnx", "onnxruntime", "sb3_contrib"])
def test_a_missing_package_is_named_before_anything_is_loaded_or_written(
    module, exported, tmp_path, capsys, monkeypatch
) -> None:
    from umbrella_env import export

    checkpoint = exported[0] if module == "sb3_contrib" else MODELS / "az-2p.pt"
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError

    def load(path):
        raise AssertionError(f"{path} loaded before the missing {module} was named")

    monkeypatch.setattr(export, "LOADERS", {".zip": load, ".pt": load})
    package = {"sb3_contrib": "sb3-contrib"}.get(module, module)
    info_code = export.main([str(checkpoint), str(tmp_path / "x.onnx")])
    assert info_code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"error: exporting needs {package} (" in err and err.endswith('pip install -c constraints.txt -e ".[train]"')
    assert list(tmp_path.iterdir()) == []


def _mismatched_checkpoints(folder: Path) -> list[tuple[Path, str]]:
    """Copies of the shipped az-2p.pt beside a sidecar that does not describe its weights,
    and torch files that hold no network, each with the words that refuse it."""
    import torch

    def unhashed(name: str) -> dict:  # the sidecar less its file's SHA-256 (which catches any change first)
        return {k: v for k, v in json.loads((MODELS / name).read_text(encoding="utf-8")).items() if k != "sha256"}

    sidecar = unhashed("az-2p.json")

    def pair(name: str, weights: Path | bytes | dict, meta: dict) -> Path:
        path = folder / f"{name}.pt"
        if isinstance(weights, Path):
            path.write_bytes(weights.read_bytes())
        elif isinstance(weights, bytes):
            path.write_bytes(weights)
        else:
            torch.save(weights, path)
        path.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
        return path

    three = pair("three", MODELS / "az-2p.pt", {**sidecar, "num_players": 3})
    net = pair("net", MODELS / "az-2p.pt", unhashed("az-2p-net.json"))
    blob = torch.load(MODELS / "az-2p.pt", weights_only=True)
    nan = {**blob, "state_dict": {k: v.clone() for k, v in blob["state_dict"].items()}}
    first = next(iter(nan["state_dict"]))
    nan["state_dict"][first].view(-1)[7] = float("nan")
    damaged = bytearray((MODELS / "az-2p.pt").read_bytes())
    damaged[len(damaged) // 2] ^= 0x40  # one flipped bit inside the weights: torch reads it without a word
    hashed = json.loads((MODELS / "az-2p.json").read_text(encoding="utf-8"))
    return [
        (pair("damaged", bytes(damaged), hashed), "(its SHA-256 differs): the file was changed or damaged after"),
        # a sidecar edited to another plate level: the weights fit, the checkpoint's own copy says level 1
        (pair("level2", MODELS / "az-2p.pt", {**sidecar, "plate_level": 2}), "plate_level 2 in the sidecar, 1 in the"),
        # NaN weights: it played its first legal action, and its export passed the check (max(0, nan) is 0)
        (pair("nan", nan, sidecar), f"holds weights that are not finite (NaN or inf) in {first}; it cannot play"),
        (three, f"checkpoint {str(three)!r} does not match its sidecar {str(three.with_suffix('.json'))!r}: "),
        (three, "of another shape (first: value.weight, (2, 192) in the file, (3, 192) for the sidecar)"),
        (net, "does not match its sidecar"),
        (net, "missing from the file (first: heuristic_gain)"),
        (pair("nostate", {"weights": torch.zeros(1)}, sidecar), "holds no network weights ('state_dict')"),
        # a network of the sidecar's shape was built first: torch tried to allocate 3.76e15 bytes
        (
            pair("huge", MODELS / "az-2p.pt", {**sidecar, "hidden": [10**12, 192]}),
            "'hidden' must be a list of 1 to 16 layer sizes",
        ),
        (
            pair("word", MODELS / "az-2p.pt", {**sidecar, "slide_hidden": "x"}),
            "'slide_hidden' must be an integer from 1 to 8,192",
        ),
        # the search settings an agent reads: float(None) raised a TypeError
        (pair("search", MODELS / "az-2p.pt", {**sidecar, "c_scale": None}), "'c_scale' must be a number in (0, 100]"),
        (pair("sigma", MODELS / "az-2p.pt", {**sidecar, "c_scale": 1e307}), "'c_scale' must be a number in (0, 100]"),
        (pair("junk", b"junk\n", sidecar), "is not a torch file; expected a torch checkpoint written by"),
    ]


@pytest.mark.train
def test_weights_that_do_not_match_their_sidecar_are_refused_in_one_line(tmp_path, capsys) -> None:
    from agents.az.net import load_network
    from umbrella_env import export
    from umbrella_env.play import main as play

    for checkpoint, words in _mismatched_checkpoints(tmp_path):
        with pytest.raises(ValueError) as info:
            load_network(checkpoint)  # torch's RuntimeError, a KeyError before
        assert words in str(info.value) and "\n" not in str(info.value), str(info.value)
        exit_info_code = export.main([str(checkpoint), str(tmp_path / "x.onnx")])
        assert exit_info_code == 2 and words in capsys.readouterr().err
        out = io.StringIO()
        players = "3" if checkpoint.stem == "three" else "2"
        level = "2" if checkpoint.stem == "level2" else "1"  # the game its sidecar claims
        argv = ["--players", players, "--level", level, "--opponents", str(checkpoint), "--seed", "1"]
        assert play(argv, stdin=None, stdout=out) == 2
        assert words in out.getvalue()
    assert not (tmp_path / "x.onnx").exists()


def _foreign_zip(folder: Path) -> Path:
    """A MaskablePPO checkpoint of another env (Box(4) observations, Discrete(3) actions)
    beside a sidecar copied from an Umbrella one."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    class Tiny(gym.Env):
        observation_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
        action_space = gym.spaces.Discrete(3)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(4, np.float32), {}

        def step(self, action):
            return np.zeros(4, np.float32), 0.0, True, False, {}

        def action_masks(self):
            return np.ones(3, dtype=bool)

    path = folder / "foreign.zip"
    MaskablePPO("MlpPolicy", Tiny(), n_steps=8, batch_size=8, policy_kwargs={"net_arch": [8]}, device="cpu").save(path)
    sidecar = {"num_players": 2, "plate_level": 1, "obs_size": 899, "num_actions": 968, "timesteps": 0}
    path.with_suffix(".json").write_text(json.dumps(sidecar), encoding="utf-8")
    return path


@pytest.mark.train
def test_a_policy_for_other_spaces_is_refused_when_loaded(tmp_path, capsys) -> None:
    from umbrella_env import export
    from umbrella_env.play import main as play

    checkpoint = _foreign_zip(tmp_path)
    words = f"checkpoint {str(checkpoint)!r} is a policy for observations Box(-1.0, 1.0, (4,), float32) and actions "
    words += "Discrete(3); Umbrella's are observations of shape (899,) and Discrete(968)"
    with pytest.raises(ValueError) as info:
        make_agent(str(checkpoint))
    assert str(info.value) == words
    exit_info_code = export.main([str(checkpoint), str(tmp_path / "x.onnx")])  # a RuntimeError traceback before
    assert exit_info_code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "x.onnx").exists()
    out = io.StringIO()  # play took it as an opponent that failed every move
    assert play(["--opponents", str(checkpoint), "--seed", "1"], stdin=None, stdout=out) == 2
    assert words in out.getvalue()


@pytest.mark.train
def test_export_module_takes_any_policy_value_network(tmp_path) -> None:
    """The path a policy+value net of another trainer takes: (obs, mask) -> (logits, value [B, 1])."""
    import torch

    from agents.onnx_agent import OnnxAgent
    from umbrella_env.export import export_module, masked_outputs, sample_positions

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(1)
            self.body = torch.nn.Sequential(torch.nn.Linear(899, 32), torch.nn.ReLU())
            self.policy, self.value = torch.nn.Linear(32, 968), torch.nn.Linear(32, 1)

        def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            h = self.body(obs)
            return self.policy(h), torch.tanh(self.value(h))

    meta = {"num_players": 3, "plate_level": 2, "obs_size": 899, "num_actions": 968, "trainer": "az"}
    path = export_module(Net(), meta, tmp_path / "az.onnx")
    agent = OnnxAgent(path, num_players=3, plate_level=2)
    assert agent.meta["trainer"] == "az"
    obs, masks = sample_positions(GameConfig(num_players=3, plate_level=2), 50, seed=2)
    want = masked_outputs(Net(), obs, masks)
    got = agent.evaluate(obs, masks)
    np.testing.assert_allclose(got[0], want[0], atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], atol=1e-5)

    class Wrong(torch.nn.Module):
        def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            return obs

    with pytest.raises(ValueError, match=r"must return \(logits, value\)"):
        export_module(Wrong(), meta, tmp_path / "wrong.onnx")
    with pytest.raises(ValueError, match="lacks 'plate_level'"):
        export_module(Net(), {k: v for k, v in meta.items() if k != "plate_level"}, tmp_path / "x.onnx")
    assert not (tmp_path / "wrong.onnx").exists() and not (tmp_path / "x.onnx").exists()

    import onnx

    def broken(model: object) -> None:
        raise onnx.checker.ValidationError("broken graph")

    before = path.read_bytes()  # a failure after the graph is written keeps the previous file whole
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(onnx.checker, "check_model", broken)
        with pytest.raises(onnx.checker.ValidationError):
            export_module(Net(), meta, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["az.onnx"]  # no temporary file left


@pytest.mark.train
def test_the_onnx_agent_plays_without_torch(exported, tmp_path) -> None:
    _, onnx_path = exported
    script = textwrap.dedent(f"""
        import sys

        BLOCKED = ("torch", "stable_baselines3", "sb3_contrib")

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"{{name}} is blocked in this test")
                return None

        sys.meta_path.insert(0, Block())
        from agents import make_agent
        from umbrella_env.core.config import GameConfig
        from umbrella_env.core.single import SingleGame

        game = SingleGame.new(GameConfig(num_players=2, max_turns=40), key=11)
        agents = [make_agent({str(onnx_path)!r}, num_players=2, plate_level=1),
                  make_agent({str(onnx_path)!r}, num_players=2, plate_level=1, deterministic=False, seed=4)]
        decisions = 0
        while not game.done:
            mask = game.legal_mask()
            action = agents[game.actor].act(game.observe(), mask)
            assert mask[action], action
            game.step(action)
            decisions += 1
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        print(decisions, loaded)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr
    decisions, loaded = run.stdout.split(maxsplit=1)
    assert int(decisions) > 20 and loaded.strip() == "[]"


@pytest.mark.train
@pytest.mark.parametrize("which", ["zip", "onnx"])
def test_trained_policy_agents_refuse_bad_observations_and_masks(exported, which: str) -> None:
    """The PPO agent chose action 0 for an all-false mask (act and act_batch) and met other
    shapes, and a NaN, as torch errors from inside the network; both agents now refuse them
    with the same words."""
    from agents import make_agent
    from umbrella_env.core.single import SingleGame

    agent = make_agent(exported[0] if which == "zip" else exported[1], seed=0)
    game = SingleGame.new(GameConfig(num_players=2), key=3)
    obs, mask = game.observe(), game.legal_mask()
    empty = np.zeros(A.NUM_ACTIONS, dtype=bool)
    for args, message in (
        ((obs, empty), "no legal action: the game is over or the mask is empty"),
        ((obs, mask[:100]), r"action_mask must have shape \(968,\), one entry per action id, got shape \(100,\)"),
        ((obs, mask * 2), "action_mask entries must be 0 or 1"),
        ((obs[:10], mask), r"observation must have shape \(899,\), got shape \(10,\)"),
        ((np.stack([obs, obs]), mask), r"observation must have shape \(899,\), got shape \(2, 899\)"),
        ((np.full_like(obs, np.nan), mask), "observation has a NaN or infinite value"),
    ):
        with pytest.raises(ValueError, match=message):
            agent.act(*args)
    with pytest.raises(ValueError, match="no legal action in mask 1"):
        agent.act_batch(np.stack([obs, obs]), np.stack([mask, empty]))
    with pytest.raises(ValueError, match=r"expected observations \[n, 899\] and action masks \[n, 968\]"):
        agent.act_batch(np.stack([obs, obs]), mask[None])
    assert mask[agent.act(obs, mask.astype(np.int8))]
    assert mask[agent.act_batch(obs[None], mask[None])].all()


@pytest.mark.train
@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize("which", ["zip", "onnx"])
def test_policy_agents_refuse_outputs_that_are_not_finite(exported, tmp_path, which: str, deterministic: bool) -> None:
    """Finite weights whose outputs overflow (loading refuses only weights that are not
    finite): the ONNX agent played the first legal action at every decision (argmax of NaN)
    or action 0, legal or not (sampling), and the PPO agent failed inside torch; both now
    refuse in one line."""
    import torch

    from agents.checks import OutputsNotFinite
    from umbrella_env.core.single import SingleGame
    from umbrella_env.export import export_module

    if which == "zip":
        agent = make_agent(exported[0], seed=0, deterministic=deterministic)
        with torch.no_grad():
            agent.model.policy.action_net.weight.fill_(3e38)
        name = str(exported[0])
    else:

        class Net(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.policy = torch.nn.Linear(OBS, A.NUM_ACTIONS)
                with torch.no_grad():
                    self.policy.weight.fill_(3e38)

            def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                return self.policy(obs), obs.sum(dim=1)

        meta = {"num_players": 2, "plate_level": 1, "obs_size": OBS, "num_actions": A.NUM_ACTIONS}
        name = str(export_module(Net(), meta, tmp_path / "huge.onnx"))
        agent = OnnxAgent(name, seed=0, deterministic=deterministic)
    game = SingleGame.new(GameConfig(num_players=2), key=3)
    obs, mask = game.observe(), game.legal_mask()
    words = f"model {name!r} gave outputs that are not finite (NaN or inf)"
    with pytest.raises(OutputsNotFinite, match=re.escape(f"{words}, so it cannot choose an action")):
        agent.act(obs, mask)
    where = " for position 0 of the batch" if which == "onnx" else ""  # torch refuses the batch as a whole
    with pytest.raises(OutputsNotFinite, match=re.escape(f"{words}{where}")):
        agent.act_batch(np.stack([obs, obs]), np.stack([mask, mask]))


@pytest.mark.train
@pytest.mark.parametrize("which", ["zip", "onnx"])
def test_trained_policy_agents_refuse_a_configuration_that_is_not_one(exported, which: str) -> None:
    """``num_players="2"`` was refused as "trained for num_players=2, but this game has
    num_players=2", and ``plate_level=True`` accepted for 1."""
    from agents import make_agent

    path = exported[0] if which == "zip" else exported[1]
    with pytest.raises(ValueError, match="num_players must be None or an integer in 1-4, got '2'"):
        make_agent(path, num_players="2")
    with pytest.raises(ValueError, match="plate_level must be None or an integer in 1-4, got True"):
        make_agent(path, plate_level=True)
    assert make_agent(path, num_players=np.int64(2), plate_level=1).meta["num_players"] == 2


def test_a_missing_onnxruntime_names_the_install_command(tmp_path, monkeypatch) -> None:
    from agents import make_agent

    (tmp_path / "model.onnx").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime now raises ImportError
    with pytest.raises(ValueError, match=r'needs onnxruntime: pip install -c constraints.txt -e "\.\[onnx\]"'):
        make_agent(str(tmp_path / "model.onnx"))


def test_sampling_follows_the_softmax_of_the_legal_logits() -> None:
    rng = np.random.default_rng(0)
    logits = np.full((1, 12), MASKED_LOGIT, dtype=np.float32)
    legal = np.array([1, 4, 5, 11])
    logits[0, legal] = [0.0, 1.0, 2.0, -1.0]
    draws = sample_masked(np.repeat(logits, 20000, axis=0), rng)
    assert set(np.unique(draws)) <= set(legal.tolist())
    p = np.exp(logits[0, legal] - logits[0, legal].max())
    p /= p.sum()
    freq = np.array([(draws == a).mean() for a in legal])
    assert np.abs(freq - p).max() < 0.015  # about 4 standard deviations at 20,000 draws
    # Seeded: the same generator state gives the same draws.
    again = sample_masked(np.repeat(logits, 20000, axis=0), np.random.default_rng(0))
    np.testing.assert_array_equal(draws, again)


@pytest.mark.train
def test_exports_from_several_threads_all_succeed_and_hide_only_torchs_deprecation(tmp_path) -> None:
    """torch's exporter keeps a process-wide "exporting" flag: 3 of 4 exports started together
    in threads failed with a bare AssertionError.  And the export hid every warning (a
    process-wide ``simplefilter("ignore")``, which another thread's ``catch_warnings`` could
    leave in place): now only the classic exporter's deprecation notices are hidden."""
    import threading
    import warnings
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from agents.onnx_agent import OnnxAgent
    from umbrella_env.export import export_module

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.policy, self.value = torch.nn.Linear(899, 968), torch.nn.Linear(899, 1)

        def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            if torch.onnx.is_in_onnx_export():
                warnings.warn("the module's own warning", UserWarning, stacklevel=1)
            return self.policy(obs), torch.tanh(self.value(obs))

    meta = {"num_players": 2, "plate_level": 1, "obs_size": 899, "num_actions": 968}
    barrier = threading.Barrier(4)

    def export(i: int) -> Path:
        barrier.wait()
        return export_module(Net(), meta, tmp_path / f"m{i}.onnx")

    filters = list(warnings.filters)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with ThreadPoolExecutor(4) as pool:
            paths = list(pool.map(export, range(4)))
    assert warnings.filters == filters
    for path in paths:
        OnnxAgent(path, num_players=2, plate_level=1)
    messages = [str(w.message) for w in seen]
    assert "the module's own warning" in messages
    assert not any("TorchScript-based ONNX export" in m or "feature will be removed" in m for m in messages)


@pytest.mark.train
def test_the_shipped_alphazero_network_exports_with_parity(tmp_path) -> None:
    """The shipped network without heuristic inputs (``az-2p``) exports too: logits agree to
    1e-6 of their largest magnitude (their logits reach about 100: float32 rounding alone is
    about 1e-5 there) and the observer's value within 1e-5, on positions of every phase, and
    the ONNX agent plays the network's greedy move."""
    import copy

    import onnx
    import torch

    from agents.az.net import load_network
    from agents.onnx_agent import decode_metadata
    from umbrella_env import export

    source = MODELS / "az-2p.pt"
    umask = os.umask(0o027)
    try:
        out = export.export_checkpoint(source, tmp_path / "az-2p.onnx")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # the umask decides (a mkstemp file was 0600)
    props = decode_metadata({p.key: p.value for p in onnx.load(str(out)).metadata_props})
    # the graph's value output is the deciding seat's, not the network's per-seat values
    assert props["value"] == export.AZ_VALUE and "deciding seat's own" in props["value"]
    # the .pt's SHA-256 once, as the source's: a "sha256" key would read as the graph's own
    assert (
        "sha256" not in props
        and props["source_sha256"] == json.loads(source.with_suffix(".json").read_text())["sha256"]
    )
    obs, masks = export.sample_positions(GameConfig(num_players=2, plate_level=1), 300, seed=3)
    module = export.load_az(source)[0]
    parity = export.check_parity(module, out, obs, masks)
    # a network whose outputs are NaN fails the check (max(0.0, nan) is 0.0: it passed)
    broken = export.AZPolicyNet(copy.deepcopy(module.net))
    with torch.no_grad():
        next(broken.parameters()).fill_(float("nan"))
    nan_parity = export.check_parity(broken, out, obs[:8], masks[:8])
    assert nan_parity.max_logit_diff == nan_parity.max_logit_rel == float("inf")
    unmasked = np.ones_like(masks[:64])  # onnxruntime given every action: it picks illegal ones
    wrong = export.check_parity(module, out, obs[:64], masks[:64], chunk=64)
    assert wrong.other_actions == 0
    broken_onnx = export.OnnxAgent(out)
    real = broken_onnx.evaluate
    original = export.OnnxAgent.evaluate
    try:
        export.OnnxAgent.evaluate = lambda self, o, m: real(o, unmasked[: len(o)])  # type: ignore[method-assign]
        assert export.check_parity(module, out, obs[:64], masks[:64], chunk=64).other_actions > 0
    finally:
        export.OnnxAgent.evaluate = original  # type: ignore[method-assign]
    chunked = export.check_parity(module, out, obs, masks, chunk=64)  # in chunks, the same figures
    assert (chunked.positions, chunked.same_actions) == (parity.positions, parity.same_actions)
    assert chunked.max_logit_diff == pytest.approx(parity.max_logit_diff, abs=1e-5)
    assert chunked.max_value_diff == pytest.approx(parity.max_value_diff, abs=1e-6)
    with torch.no_grad():
        scale = float(module(torch.as_tensor(obs), torch.as_tensor(masks))[0].abs().max())
    assert parity.max_logit_diff <= 1e-6 * max(10.0, scale), (parity, scale)
    assert parity.max_value_diff <= 1e-5, parity
    assert parity.same_actions == parity.positions and parity.other_actions == 0
    net, _ = load_network(source)
    agent = make_agent(str(out), num_players=2, plate_level=1)
    logits, _ = net.predict(obs[:20])
    for o, m, row in zip(obs[:20], masks[:20], logits):
        assert agent.act(o, m) == int(np.flatnonzero(m)[np.argmax(row[m])])


def test_an_onnxruntime_older_than_the_floor_is_named_when_a_model_opens(monkeypatch, tmp_path) -> None:
    """pyproject.toml's extras ask for onnxruntime >= 1.20, but one installed by other means was
    used whatever its version; the floor is checked where a model is opened, in one line."""
    import types

    from agents.onnx_agent import ONNXRUNTIME_FLOOR, onnxruntime_problem
    from tests.test_packaging import PYPROJECT

    floor = ".".join(map(str, ONNXRUNTIME_FLOOR))
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert f"onnxruntime>={floor}" in extras["onnx"] and f"onnxruntime>={floor}" in extras["train"]  # one floor
    assert onnxruntime_problem("1.20.0") is None and onnxruntime_problem("1.32.0") is None
    assert onnxruntime_problem("2.0.1") is None
    assert "onnxruntime 1.19.2 is older than 1.20" in onnxruntime_problem("1.19.2")
    assert "pip install 'onnxruntime>=1.20'" in onnxruntime_problem("weird")
    old = types.ModuleType("onnxruntime")
    old.__version__ = "1.16.3"
    monkeypatch.setitem(sys.modules, "onnxruntime", old)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"never read: the version is checked first")
    with pytest.raises(ValueError, match=re.escape("onnxruntime 1.16.3 is older than 1.20")):
        from agents.onnx_agent import _open_session

        _open_session(model, 1)


@pytest.mark.train
def test_a_confident_policy_exports_its_logits_checked_against_their_size(exported, tmp_path, capsys) -> None:
    """Logits in the thousands differ by more than 1e-4 between torch and onnxruntime from
    float32 rounding alone: the export failed such a policy (exit 1) though both chose the
    same action everywhere (agents audit, 2026-12-07).  The check is relative to the row's
    largest legal logit, as the shipped network's test measures it."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents.policy import save_model
    from umbrella_env import export

    checkpoint, _ = exported
    model = MaskablePPO.load(checkpoint, device="cpu")
    with torch.no_grad():
        for p in model.policy.action_net.parameters():
            p.mul_(20_000)
    sharp = save_model(model, tmp_path / "sharp.zip", num_players=2, plate_level=1)
    assert export.main([str(sharp), str(tmp_path / "sharp.onnx"), "--check-positions", "256"]) == 0
    said = capsys.readouterr().out
    rel = re.search(r"max \|logit diff\| (\S+), .* \(logits relative to their size: (\S+)\)", said)
    assert rel is not None, said  # the absolute difference is over the tolerance: the relative one is shown
    assert float(rel.group(1)) > export.TOLERANCE >= float(rel.group(2))
    assert re.search(r"same action (\d+)/\1", said), said  # the same greedy move everywhere
