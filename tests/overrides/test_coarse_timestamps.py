"""No acknowledged write is lost where timestamps are coarse (1 s, as on ext3, HFS+, FAT or some
network mounts) and inodes are reused: after every write the file is given back its first inode
and one fixed mtime, so a cache keyed by (mtime, size, inode) would see the same stamp again."""

import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from promptkit import Prompt, TextSection
from promptkit.overrides import LocalPromptOverridesStore

ONE_TICK_NS = 1_700_000_000 * 10**9
ROUNDS = 30

SETTLE = """
def settle(file, tick):
    '''Give `file` its first inode back (kept by a hard link) and the mtime `tick`.'''
    keeper = file.with_name(".first-inode")
    if not keeper.exists():
        os.link(file, keeper)
    elif not os.path.samefile(file, keeper):
        keeper.write_bytes(file.read_bytes())  # into the first inode, in place
        os.replace(keeper, file)
        os.link(file, keeper)
    os.utime(file, ns=(tick, tick))
"""

WRITER = f"""
import os
import sys
from pathlib import Path

from filelock import FileLock

from promptkit import Prompt, TextSection
from promptkit.overrides import LocalPromptOverridesStore
{SETTLE}
root, name, rounds, tick = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prompt = Prompt(
    ns="coarse",
    key="clock",
    sections=tuple(TextSection(title=k, key=k, text="default") for k in ("a", "b", "c", "d")),
)
store = LocalPromptOverridesStore(root)
file = store.prompt_file("coarse", "clock")
for number in range(rounds):
    store.resolve(prompt.descriptor)
    store.set_section_override(prompt, path=name, body=f"{{name}} {{number:04d}}")
    with FileLock(str(file) + ".lock"):
        settle(file, tick)
"""

namespace: dict[str, object] = {"os": os}
exec(SETTLE, namespace)
settle = namespace["settle"]


def _prompt() -> Prompt[None]:
    return Prompt(
        ns="coarse",
        key="clock",
        sections=tuple(TextSection(title=k, key=k, text="default") for k in ("a", "b", "c", "d")),
    )


def _bodies(root: Path) -> dict[str, str]:
    stored = LocalPromptOverridesStore(root).resolve(_prompt().descriptor)
    assert stored is not None
    return {"/".join(path): entry.body for path, entry in stored.sections.items()}


def test_two_stores_writing_in_turn_within_one_tick_lose_no_write(tmp_path: Path) -> None:
    prompt = _prompt()
    first, second = (LocalPromptOverridesStore(tmp_path / "overrides") for _ in range(2))
    file = first.prompt_file("coarse", "clock")
    for number in range(ROUNDS):
        # Each store has read the file (a render) before the other one writes it again.
        first.resolve(prompt.descriptor)
        second.resolve(prompt.descriptor)
        for store, name in ((first, "a"), (second, "b")):
            store.set_section_override(prompt, path=name, body=f"{name} {number:04d}")
            settle(file, ONE_TICK_NS)  # type: ignore[operator]

        assert _bodies(tmp_path / "overrides") == {"a": f"a {number:04d}", "b": f"b {number:04d}"}


def test_a_store_reads_what_another_wrote_within_the_same_tick(tmp_path: Path) -> None:
    prompt = _prompt()
    reader, writer = (LocalPromptOverridesStore(tmp_path / "overrides") for _ in range(2))
    file = writer.prompt_file("coarse", "clock")
    writer.set_section_override(prompt, path="a", body="first")
    settle(file, ONE_TICK_NS)  # type: ignore[operator]
    assert "first" in prompt.render(overrides_store=reader).text

    writer.set_section_override(prompt, path="a", body="again")  # the same size as "first"
    settle(file, ONE_TICK_NS)  # type: ignore[operator]

    assert "again" in prompt.render(overrides_store=reader).text


def test_processes_writing_within_one_tick_lose_no_write(tmp_path: Path) -> None:
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER, encoding="utf-8")
    root = tmp_path / "overrides"
    names = ("a", "b", "c", "d")
    workers = [
        subprocess.Popen(
            [sys.executable, str(writer), str(root), name, str(ROUNDS), str(ONE_TICK_NS)],
            cwd=tmp_path,
        )
        for name in names
    ]

    assert [worker.wait(timeout=120) for worker in workers] == [0] * len(names)
    assert _bodies(root) == {name: f"{name} {ROUNDS - 1:04d}" for name in names}
    assert not FileLock(str(root / "coarse" / "clock" / "latest.toml.lock")).is_locked
