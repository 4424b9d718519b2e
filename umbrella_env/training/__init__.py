"""Training (the layer above the environment library and :mod:`agents`).

* :mod:`~umbrella_env.training.ppo`: MaskablePPO on the batched core, the ``train.py`` /
  ``umbrella-train`` command (needs the ``train`` extra);
* :mod:`~umbrella_env.training.imitation`: behaviour cloning from a teacher agent's games;
* :mod:`~umbrella_env.training.bench`: training throughput benchmark.

The policy network's figure features live in :mod:`agents.features`, beside the agent
that loads trained policies.
"""
