"""The hosted arena (``arena serve``): users with bearer tokens, a JSON API that
hosts matches against the hosted bots on ports any ACPC agent connects to, and a
leaderboard over what was played. One trio process: Hypercorn serves the
Starlette app (:mod:`arena.serve.app`), the dealer plays the matches
(:mod:`arena.serve.matches`), SQLite in WAL mode keeps users and matches
(:mod:`arena.serve.store`) and the dealer's files keep the hands. docs/hosting.md
is the manual."""
