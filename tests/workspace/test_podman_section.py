"""PodmanWorkspaceSection: unavailable podman, the sandboxed command line, and real containers.

The real-container tests need podman and a static busybox on this machine: they build a local
image from busybox (nothing is pulled) and are skipped, with the reason, where either is
missing or podman cannot run containers.
"""

import io
import shutil
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptkit.errors import WorkspaceUnavailableError
from promptkit.session import Session
from promptkit.workspace import HostMount, PodmanWorkspaceSection, VfsWorkspaceSection
from promptkit.workspace._podman import CONTAINER_WORKSPACE, podman_run_command

from .conftest import call, snapshot_tree

TEST_IMAGE = "localhost/promptkit-test-busybox:latest"


def test_missing_podman_raises_unavailable_with_install_hint(host_tree: Path) -> None:
    with pytest.raises(WorkspaceUnavailableError) as raised:
        PodmanWorkspaceSection(
            session=Session(), mounts=[HostMount(host_tree)], podman="promptkit-no-such-podman"
        )

    message = str(raised.value)
    assert "podman was not found on PATH" in message
    assert "apt-get install podman" in message
    assert "VfsWorkspaceSection" in message


def test_run_command_is_read_only_without_network_by_default() -> None:
    argv = podman_run_command(
        podman="podman",
        image="example/image:1",
        workspace_dir="/tmp/copy",
        command="make test",
        container_name="promptkit-abc",
    )

    assert argv[:3] == ["podman", "run", "--rm"]
    assert "--network=none" in argv
    assert "--read-only" in argv
    assert "--cap-drop=all" in argv
    assert "--security-opt=no-new-privileges" in argv
    assert "--pull=never" in argv
    volume = argv[argv.index("--volume") + 1]
    assert volume == f"/tmp/copy:{CONTAINER_WORKSPACE}:ro"
    assert argv[-4:] == ["example/image:1", "/bin/sh", "-c", "make test"]


def test_run_command_with_network_and_runtime() -> None:
    argv = podman_run_command(
        podman="/usr/bin/podman",
        image="img",
        workspace_dir="/w",
        command="true",
        container_name="c",
        network=True,
        runtime="runc",
        ulimits=("nofile=64:64",),
    )

    assert argv[:3] == ["/usr/bin/podman", "--runtime", "runc"]
    assert not any(arg.startswith("--network") for arg in argv)
    assert argv[argv.index("--ulimit") + 1] == "nofile=64:64"


@pytest.fixture(scope="module")
def podman_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A local image holding only busybox (static, as busybox-static installs it); skips where
    that cannot be built. A dynamically linked busybox fails the probe and skips there."""
    podman = shutil.which("podman")
    busybox = shutil.which("busybox")
    if podman is None or busybox is None:
        pytest.skip("needs podman and a static busybox (apt-get install podman busybox-static)")
    if subprocess.run([podman, "image", "exists", TEST_IMAGE], check=False).returncode == 0:
        return TEST_IMAGE
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as archive:
        archive.add(busybox, arcname="bin/busybox")
        for applet in ("sh", "ls", "cat", "echo", "sleep", "wget", "wc", "true"):
            link = tarfile.TarInfo(f"bin/{applet}")
            link.type = tarfile.SYMTYPE
            link.linkname = "busybox"
            archive.addfile(link)
    imported = subprocess.run(
        [podman, "import", "-", TEST_IMAGE],
        input=layer.getvalue(),
        capture_output=True,
        check=False,
    )
    if imported.returncode != 0:
        pytest.skip(f"podman import failed: {imported.stderr.decode(errors='replace').strip()}")
    return TEST_IMAGE


@pytest.fixture(scope="module")
def podman_runtime(podman_image: str, tmp_path_factory: pytest.TempPathFactory) -> str | None:
    """podman's default runtime when it runs containers here, else runc; skips when neither."""
    root = tmp_path_factory.mktemp("probe")
    reasons = []
    for runtime in (None, "runc"):
        try:
            PodmanWorkspaceSection(
                session=Session(), mounts=[HostMount(root)], image=podman_image, runtime=runtime
            )
        except WorkspaceUnavailableError as error:
            reasons.append(f"{runtime or 'default'}: {error}")
            continue
        return runtime
    pytest.skip("podman cannot run containers here: " + " | ".join(reasons))


@pytest.fixture
def podman_section(
    host_tree: Path, podman_image: str, podman_runtime: str | None
) -> Iterator[PodmanWorkspaceSection]:
    yield PodmanWorkspaceSection(
        session=Session(),
        mounts=[HostMount(host_tree)],
        image=podman_image,
        runtime=podman_runtime,
    )


def test_missing_image_raises_unavailable(host_tree: Path, podman_runtime: str | None) -> None:
    image = f"localhost/promptkit-missing-{uuid.uuid4().hex[:8]}:latest"
    with pytest.raises(WorkspaceUnavailableError, match="podman pull"):
        PodmanWorkspaceSection(
            session=Session(), mounts=[HostMount(host_tree)], image=image, runtime=podman_runtime
        )


def test_podman_section_offers_the_vfs_tools_and_shell_execute(
    podman_section: PodmanWorkspaceSection, host_tree: Path
) -> None:
    vfs_tools = VfsWorkspaceSection(session=Session(), mounts=[HostMount(host_tree)]).tools

    assert [tool.name for tool in podman_section.tools] == [
        *(tool.name for tool in vfs_tools),
        "shell_execute",
    ]
    assert call(podman_section, "vfs_read_file", path="/README.md").success


def test_shell_sees_the_workspace_copy_without_credentials(
    podman_section: PodmanWorkspaceSection,
) -> None:
    result = call(podman_section, "shell_execute", command="cat README.md; ls -a")

    assert result.success
    assert "Run `make test`." in result.message
    assert ".env" not in result.message
    assert "huge.log" not in result.message


def test_shell_sees_files_written_with_vfs_write_file(
    podman_section: PodmanWorkspaceSection,
) -> None:
    call(podman_section, "vfs_write_file", path="/notes/todo.md", content="from the model\n")

    result = call(podman_section, "shell_execute", command="cat notes/todo.md")

    assert "from the model" in result.message


def test_workspace_is_read_only_in_the_container(
    podman_section: PodmanWorkspaceSection, host_tree: Path
) -> None:
    before = snapshot_tree(host_tree)

    result = call(podman_section, "shell_execute", command="echo x > README.md")

    assert not result.success
    assert result.value["exit_code"] != 0
    assert "Read-only file system" in result.message
    assert snapshot_tree(host_tree) == before


def test_tmp_is_writable_in_the_container(podman_section: PodmanWorkspaceSection) -> None:
    result = call(podman_section, "shell_execute", command="echo ok > /tmp/x && cat /tmp/x")

    assert result.success
    assert "ok" in result.message


def test_container_has_no_network(podman_section: PodmanWorkspaceSection) -> None:
    result = call(podman_section, "shell_execute", command="ls /sys/class/net")

    assert result.success
    assert result.message.split("stdout:\n", 1)[1].split() == ["lo"]


def test_slow_command_is_stopped_at_its_timeout(podman_section: PodmanWorkspaceSection) -> None:
    result = call(podman_section, "shell_execute", command="sleep 30", timeout=1)

    assert not result.success
    assert result.value == {"exit_code": None, "timed_out": True}
    assert "was stopped after 1s" in result.message


def test_clone_requires_a_session(podman_section: PodmanWorkspaceSection) -> None:
    with pytest.raises(TypeError, match="requires session"):
        podman_section.clone()


def test_clone_keeps_image_and_runtime(podman_section: PodmanWorkspaceSection) -> None:
    clone = podman_section.clone(session=Session())

    assert (clone.image, clone.runtime, clone.network) == (
        podman_section.image,
        podman_section.runtime,
        False,
    )
    assert call(clone, "shell_execute", command="cat README.md").success
