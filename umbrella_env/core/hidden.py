"""Hidden information: the tiles a seat cannot see, and copies of a game with them redrawn.

The tiles under the top of a stack are the game's only hidden information (docs/rules.md
§6); nothing is private, so every seat sees the same.  :func:`determinize` is the one
place that redraws them, for the agents' searches (``agents.search``, the Gumbel search),
the match runner's copy of the game an agent is handed (``umbrella_env.match.agent_view``)
and the OpenSpiel adapter's ``resample_from_infostate``
(:mod:`umbrella_env.envs.openspiel`).  ``agents.common`` re-exports both functions.
"""

from __future__ import annotations

import numpy as np

from umbrella_env.core.single import SingleGame

__all__ = ["determinize", "unseen_pool"]


def unseen_pool(game: SingleGame, recall: bool = False) -> list[int]:
    """The ids of the tiles a seat cannot place, in id order: every tile neither on top of a
    stack nor in transit, and with ``recall`` neither a hidden tile shown before nor one a
    solo game discarded (docs/rules.md, decision 15).  The hidden tiles that :func:`determinize`
    draws come from it, uniformly; so does, as far as a seat can tell, a never-seen tile that
    a validation uncovers (a search's chance outcome)."""
    known = {code >> 1 for p in range(game.tables.num_players) for k in range(4) if (code := game.top_tile(p, k)) >= 0}
    if game.passing >= 0:
        known.add(game.passing >> 1)
    if recall:
        unseen = set(game.unseen_tiles())
        known.update(tile[3] >> 1 for tile in game.hidden_tiles() if tile not in unseen)
        known.update(game.discarded_tiles())
    return [t for t in range(len(game.config.components.tiles)) if t not in known]


def determinize(
    game: SingleGame,
    observer: int,
    rng: np.random.Generator,
    keep_faces: bool | None = None,
    recall: bool = False,
) -> SingleGame:
    """A copy of ``game`` whose hidden tiles are resampled from ``observer``'s point of view.

    Every tile under the top of a stack (any seat's) is replaced by a tile drawn without
    replacement, uniformly, from the tiles ``observer`` cannot see (:func:`unseen_pool`):
    those hidden tiles plus the ones in the box (every tile neither on top of a stack nor
    in transit).  The
    faces are drawn at random, except in solo, where by default (``keep_faces=None``)
    they are kept: the solo setup deals every tile black face up (docs/rules.md §8) and any
    tile covered later was visible, so the faces under the tops are public there.
    With ``recall=True`` the observer remembers: a hidden tile that was a top once
    (covered later, :meth:`SingleGame.unseen_tiles`) is kept as it is and leaves the pool,
    as do the tiles a solo game discarded (:meth:`SingleGame.discarded_tiles`), and only the
    never-seen ones are drawn.  Every seat sees the same tiles (nothing is
    private in Umbrella), so ``observer`` changes nothing today; it names whose view the
    copy is.
    Everything public — stages, zones, plates, tops, stack heights, the tile in transit —
    is unchanged, so ``observe(seat)`` is identical for every seat.

    Only the stacks change (the observation vector does not encode the tiles under the
    tops), so the copy is built directly on a clone; ``SingleGame.from_dict(result.to_dict())``
    validates it (the tests do).
    """
    g = game.clone()
    if keep_faces is None:
        keep_faces = g.tables.solo
    hidden = g.unseen_tiles() if recall else g.hidden_tiles()
    if not hidden:
        return g
    drawn = rng.permutation(unseen_pool(g, recall))[: len(hidden)]
    faces = rng.integers(0, 2, len(hidden)) if not keep_faces else None
    for n, ((seat, slot, depth, code), tile) in enumerate(zip(hidden, drawn)):
        face = code & 1 if faces is None else int(faces[n])
        g.set_hidden_tile(seat, slot, depth, 2 * int(tile) + face)
    return g
