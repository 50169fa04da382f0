"""Benchmark scores as training rewards (plain functions that RL trainers such as TRL's GRPO and verl call)."""

from koblex_tasks.rewards.legit import legit_reward, make_legit_reward

__all__ = ["legit_reward", "make_legit_reward"]
