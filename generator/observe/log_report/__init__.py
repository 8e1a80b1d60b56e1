"""Incidents from the access logs (``corpus log-report``): what the proxy received, hour by hour.

Spec §4.1 classes a proof whose response hash is the corpus's 403 body (the proxy did not send the
secret), or the frontal's 503 or 400 body, as an *instrument defect* and opens an incident. The operator
learns about those from the JSON access logs of the frontals and replicas (``nginx/snippets/
log-format.conf.j2``), which this module reads as a stream: plain or gzip-rotated files, or folders of
them, one line at a time, with counters capped so that memory stays bounded whatever the logs hold.

Which lines are the clients' answers: the frontal's when frontal lines are present (a replica's 503
that the frontal retried elsewhere reached no client); otherwise every line (a lone vhost, or only
replica logs given). Replica lines are reported apart, for what they say about the replicas.

One module per job: :mod:`.files` finds and reads the files (gzip, bounded lines, bombs), :mod:`.line` parses
one line, :mod:`.counts` counts them per hour and role and says what needs the operator, :mod:`.document` is
the ``corpus-log-report/1`` JSON document and :mod:`.text` the readable table. ``corpus log-report`` itself
is :mod:`generator.cli.observe`.
"""
