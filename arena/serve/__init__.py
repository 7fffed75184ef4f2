"""The hosted arena (``arena serve``): users with bearer tokens, a JSON API that
hosts matches against the hosted bots on ports any ACPC agent connects to, and a
leaderboard over what was played. One trio process: Hypercorn serves the
Starlette app (:mod:`arena.serve.app`: the API's routes; the pages'
:mod:`arena.serve.pages` and web tables :mod:`arena.serve.tables`; all built
with the HTTP kit :mod:`arena.serve.httpkit`), requests are checked
(:mod:`arena.serve.validation`), the match host queues them, reserves their
ports and plays them through :mod:`arena.match` (:mod:`arena.serve.hosting`),
SQLite in WAL mode keeps users and matches (:mod:`arena.serve.store`) and the
dealer's files keep the hands. docs/hosting.md is the manual."""
