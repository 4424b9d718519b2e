"""The greedy agent: the best immediate outcome, from public information only.

Decision by decision (``game.phase``):

* **slide / fallback** — a slide after which a figure is scorable, the one whose best
  validation scores most; otherwise the slide that brings a visible figure closest to
  completion (the most cells of one colour the plate can still take), then the most
  such cells summed over the figures, then the better immediate score (the personal
  zone), then a seeded random choice;
* **validate** — the largest immediate score gain (token + plate bonus change); ties keep
  the spaces accepting more figures free, then the lowest id;
* **swap_stage / swap_zone** — the swap that completes or approaches a figure most, if it
  improves on passing;
* **give_face** (2 players) — the face least complete on the receiver's stage;
* **cover** (the receiver) — the slot whose visible figure is least complete.
"""

from __future__ import annotations

import numpy as np

from agents.base import SeededAgent
from agents.common import (
    SLIDE_EJECT_SIDE,
    SLIDE_ENTRY_SIDE,
    after,
    argmax_random,
    figure_progress,
    figures,
    game_and_legal,
    gift_progress,
    personal_count,
    personal_score,
    slide_stages,
    space_flexibility,
    stage_array,
    validate_score_gain,
)
from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.single import SingleGame


class GreedyAgent(SeededAgent):
    """One-decision greedy play (see the module doc); ties broken by a seeded generator."""

    def __init__(self, seed: int | None = None, name: str = "greedy") -> None:
        super().__init__(seed, name)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: SingleGame | None = None) -> int:
        game, legal = game_and_legal(self.name, action_mask, game)
        if legal.size == 1:
            return int(legal[0])
        phase = game.phase
        if phase == A.PHASE_SLIDE:
            return self._slide(game, legal)
        if phase == A.PHASE_VALIDATE:
            return self._validate(game, legal)
        if phase == A.PHASE_GIVE_FACE:
            return self._give_face(game, legal)
        if phase == A.PHASE_COVER:
            return self._cover(game, legal)
        if phase in (A.PHASE_SWAP_STAGE, A.PHASE_SWAP_ZONE):
            return self._swap(game, legal)
        return self._by_clones(game, legal)  # fallback

    # ------------------------------------------------------------------- decisions
    def _rank(self, best: np.ndarray, extra: np.ndarray) -> np.ndarray:
        """Lexicographic key (max figure progress, summed progress, ``extra``) as one float."""
        if best.shape[1] == 0:
            return extra.astype(np.float64)
        return best.max(1) * 1000.0 + best.sum(1) * 10.0 + extra

    def _completing(self, game: SingleGame, legal: np.ndarray) -> int | None:
        """The legal slide/fallback after which the best validation scores most, if any."""
        gains = []
        for a in legal:
            g = after(game, int(a))
            if g.phase == A.PHASE_VALIDATE:
                gains.append((max(validate_score_gain(g, v) for v in g.legal_actions()), int(a)))
        if not gains:
            return None
        top = max(gain for gain, _ in gains)
        return int(self._rng.choice([a for gain, a in gains if gain == top]))

    def _slide(self, game: SingleGame, legal: np.ndarray) -> int:
        p = game.current
        figs = figures(game, p)
        best = figs.best(slide_stages(stage_array(game, p))[legal])
        scoring = self._completing(game, legal[(best == 4).any(1)]) if (best == 4).any() else None
        if scoring is not None:
            return scoring
        extra = np.zeros(legal.size)
        if not game.tables.solo:  # the personal zone's share of the immediate score
            n = personal_count(game, p)
            delta = (SLIDE_EJECT_SIDE[legal] == A.BOTTOM).astype(int) - (SLIDE_ENTRY_SIDE[legal] == A.BOTTOM)
            extra = np.array([personal_score(n + d) for d in delta]) * 0.1
        return int(legal[argmax_random(self._rank(best, extra), self._rng)])

    def _by_clones(self, game: SingleGame, legal: np.ndarray) -> int:
        """Any other stage-changing decision (the fallback): evaluate each action on a clone."""
        p = game.current
        done = self._completing(game, legal)
        if done is not None:
            return done
        figs = figures(game, p)
        clones = [after(game, int(a)) for a in legal]
        best = figs.best(np.array([g.stage(p) for g in clones], dtype=np.int64))
        extra = np.array([g.scores()[p] for g in clones]) * 0.1
        return int(legal[argmax_random(self._rank(best, extra), self._rng)])

    def _validate(self, game: SingleGame, legal: np.ndarray) -> int:
        flex = space_flexibility(game)
        keys = [(validate_score_gain(game, int(a)), -flex[(a - A.VALIDATE_START) % 10], -int(a)) for a in legal]
        return int(legal[max(range(legal.size), key=keys.__getitem__)])

    def _swap(self, game: SingleGame, legal: np.ndarray) -> int:
        p = game.current
        figs = figures(game, p, ignore=1 << game.validated_slot())  # that tile is leaving (decision 2)
        stages = np.array(
            [game.stage(p) if a in _PASSES else after(game, int(a)).stage(p) for a in legal], dtype=np.int64
        )
        key = self._rank(figs.best(stages), np.zeros(legal.size))
        pass_id = next(int(a) for a in legal if a in _PASSES)
        pass_key = key[list(legal).index(pass_id)]
        if key.max() <= pass_key:
            return pass_id
        return int(legal[argmax_random(key, self._rng)])

    def _give_face(self, game: SingleGame, legal: np.ndarray) -> int:
        receiver = F.receiver(game.current, game.tables.num_players)
        tile = game.passing & ~1
        progress = [-gift_progress(game, receiver, tile | (int(a) - A.GIVE_FACE_START)) for a in legal]
        return int(legal[argmax_random(progress, self._rng)])

    def _cover(self, game: SingleGame, legal: np.ndarray) -> int:
        r = game.actor
        progress = []
        for a in legal:
            k = int(a) - A.COVER_START
            progress.append(-figure_progress(game, r, game.top_tile(r, k), k))
        return int(legal[argmax_random(progress, self._rng)])


_PASSES = frozenset((A.SWAP_STAGE_PASS, A.SWAP_ZONE_PASS))
