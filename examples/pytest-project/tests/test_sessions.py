"""Checks on the Pi sessions this project keeps as fixtures (run: `pytest`; refresh the
snapshots after a reviewed change: `pytest --snapshot-update`)."""

from pitools.testing import PiContextSnapshot, PiMarkdownSnapshot

SESSION = "sessions/bugfix.jsonl"


def test_session_is_valid(pi_session):
    # Raises AssertionError listing every error finding as `code path:line message`.
    pi_session(SESSION).assert_valid()


def test_context_at_the_default_leaf(pi_session, snapshot):
    # Exactly what `pitools context sessions/bugfix.jsonl --format json` prints: the path,
    # the context entries after compaction and edits, and every message Pi would send.
    assert pi_session(SESSION).context() == snapshot(extension_class=PiContextSnapshot)


def test_context_on_the_side_branch(pi_session, snapshot):
    # Any leaf: an id, a unique id prefix, a label, or L<line>.
    assert pi_session(SESSION).context(leaf="61f0c3a9") == snapshot(extension_class=PiContextSnapshot)


def test_context_at_a_label(pi_session, snapshot):
    assert pi_session(SESSION).context(leaf="tests-green") == snapshot(extension_class=PiContextSnapshot)


def test_context_as_markdown(pi_session, snapshot):
    assert pi_session(SESSION).context_markdown() == snapshot(extension_class=PiMarkdownSnapshot)


def test_compaction_plan(pi_session, snapshot):
    # `pitools compact --dry-run --no-config --keep-recent-tokens 300`: the same plan on every machine.
    plan = pi_session(SESSION).plan(keep_recent_tokens=300)
    assert plan["preparation"] is not None
    assert plan == snapshot(extension_class=PiContextSnapshot)
