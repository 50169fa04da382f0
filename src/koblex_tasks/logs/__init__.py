"""Reading eval logs, shared by the leaderboard, the grid and the audit.

- `archive`, `reading`: bounded, safe reading of `.eval` files (`rejection`: why a log is refused).
- `identity`, `scores`, `rederivation`: which benchmark a log is, its per-sample scores, and each score
  recomputed from what the log recorded.
- `coverage`, `placement`, `provenance`: which items it covers, which board it belongs on, how it was made.
"""
