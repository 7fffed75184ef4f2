"""Every ``arena`` command's front end, one module each (argv -> library call -> exit
status), and the kit they share (:mod:`arena.commands._kit`)."""
