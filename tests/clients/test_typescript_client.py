"""TypeScript clients generated from the served documents, type-checked strictly and run with Node.

openapi-typescript makes the types of the venue's and the control plane's documents, served by a live
``cefisim serve``, with docs/client.md's own commands; openapi-fetch makes the calls, signed by the
page's middleware on ``node:crypto`` (``signing.ts``). ``tsc --noEmit --strict`` checks, in one run:
the page's examples, ``ts/cefi_run.ts`` (every CeFi operation) and a file written here that gives every
request body of both documents a valid value and lists its every field (each body is one type, not a
union). Node then runs the CeFi operations, the page's example and its control-plane example (reset,
clock advance, book depth) against the server.

The packages are the versions pinned in ``ts/package-lock.json`` (the page's ``npm install`` line names
the same; a test holds them equal), installed by ``npm ci`` once per lock file into
``~/.cache/cefisim/`` (``$XDG_CACHE_HOME`` when set), outside the repository. Without Node or npm the
tests skip, unless ``CEFISIM_NODE_REQUIRED=1`` (CI's ``.ci/run`` sets it): then each fails with one line.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.clients.request_examples import EXAMPLES
from tests.clients.support import (
    CONTROL_SECTION,
    DOC_URL,
    ROOT,
    SLOW,
    TS_SECTION,
    blocks,
    only,
    operations,
    reset,
    run_shell,
)

PROJECT = Path(__file__).resolve().parent / "ts"
NODE_REQUIRED = "CEFISIM_NODE_REQUIRED"
TYPES = {"cefi": "Cefi", "control": "Control"}  # the generated modules' `components`, as shapes.ts imports them


def node_and_npm() -> tuple[str, str]:
    """The ``node`` and ``npm`` commands; without them a skip, or one failing line where CI needs them."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node and npm:
        return node, npm
    missing = " and ".join(name for name, path in (("node", node), ("npm", npm)) if path is None)
    message = (
        f"{missing} not found: the TypeScript client tests need Node.js and npm (Debian: apt-get install nodejs npm)"
    )
    if os.environ.get(NODE_REQUIRED) == "1":
        pytest.fail(f"{NODE_REQUIRED}=1: {message}", pytrace=False)
    pytest.skip(message)


def installed_packages(npm: str) -> Path:
    """``node_modules`` of ``npm ci`` from ts/package-lock.json, made once per lock file in the user's cache
    (a process that loses the race to publish it drops its own copy)."""
    recipe = (PROJECT / "package.json").read_bytes() + (PROJECT / "package-lock.json").read_bytes()
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cefisim"
    done = home / f"ts-clients-{hashlib.sha256(recipe).hexdigest()[:16]}"
    if not (done / "installed").exists():
        staging = home / f"{done.name}.{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(PROJECT / name, staging / name)
        ci = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
            cwd=staging,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert ci.returncode == 0, f"npm ci in {staging} failed:\n{ci.stdout}\n{ci.stderr}"
        (staging / "installed").touch()
        try:
            staging.rename(done)
        except OSError:  # another test process published the same install first
            shutil.rmtree(staging, ignore_errors=True)
    return done / "node_modules"


def shapes(documents: dict[str, tuple[dict[str, Any], Path]]) -> str:
    """shapes.ts: per request body, a valid value of its type, its every field as a key of the type, and
    the type is no union of types. The checks first meet a union, where each must be an error (an
    unused ``@ts-expect-error`` is one itself)."""
    lines = [
        'import type { components as Cefi } from "./cefi";',
        'import type { components as Control } from "./control";',
        "",
        "type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never;",
        "// the checks bite: a union of bodies (each naming the order its own way) fails both",
        "type Split = { id: string; info: string } | { external_id: string; info: string };",
        "// @ts-expect-error a union",
        "export const splitIsOne: IsUnion<Split> = false;",
        "// @ts-expect-error a field one member lacks",
        'export const splitFields: (keyof Split)[] = ["id", "external_id", "info"];',
    ]
    for kind, (document, _file) in documents.items():
        for name, example in EXAMPLES[kind].items():
            body = f'{TYPES[kind]}["schemas"]["{name}"]'
            fields = json.dumps(sorted(document["components"]["schemas"][name]["properties"]))
            lines += [
                f"export const {kind}{name}: {body} = {json.dumps(example)};",
                f"export const {kind}{name}Fields: (keyof {body})[] = {fields};",
                f"export const {kind}{name}IsOne: IsUnion<{body}> = false;",
            ]
    return "\n".join(lines) + "\n"


@dataclass
class Built:
    """The TypeScript work folder: what ``tsc --noEmit --strict`` said, and how to run a compiled file."""

    folder: Path
    node: str
    check: subprocess.CompletedProcess[str]

    def run(self, name: str, *args: str) -> list[str]:
        done = subprocess.run(
            [self.node, str(self.folder / "out" / f"{name}.js"), *args],
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"node {name}.js: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout.splitlines()


@pytest.fixture(scope="session")
def typescript(
    sandbox: str, documents: dict[str, tuple[dict[str, Any], Path]], tmp_path_factory: pytest.TempPathFactory
) -> Built:
    """The work folder: the pinned packages, the types generated by the page's commands, the page's
    TypeScript files (with the live server's address), ts/'s files and shapes.ts; type-checked once and
    written as JavaScript to ``out/``."""
    node, npm = node_and_npm()
    folder = tmp_path_factory.mktemp("typescript")
    (folder / "node_modules").symlink_to(installed_packages(npm), target_is_directory=True)
    for name in ("package.json", "tsconfig.json", "transpile.mjs", "cefi_run.ts"):
        shutil.copy(PROJECT / name, folder / name)
    for section in (TS_SECTION, CONTROL_SECTION):
        for title, (body,) in blocks(section).items():
            if title == "generate":
                run_shell(body, sandbox, folder)
            elif title.endswith(".ts"):
                (folder / title).write_text(body.replace(DOC_URL, sandbox), encoding="utf-8")
    (folder / "shapes.ts").write_text(shapes(documents), encoding="utf-8")
    tsc = folder / "node_modules" / "typescript" / "bin" / "tsc"
    check = subprocess.run(
        [node, str(tsc), "--noEmit", "--strict", "-p", "tsconfig.json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    built = Built(folder, node, check)
    subprocess.run([node, "transpile.mjs", ".", "out"], cwd=folder, check=True, timeout=120)
    return built


def test_the_documented_packages_are_the_locked_ones() -> None:
    """The page's `npm install` lines name the versions ts/package.json pins (and its lock file holds)."""
    pinned = {**json.loads((PROJECT / "package.json").read_text())["dependencies"]}
    pinned |= json.loads((PROJECT / "package.json").read_text())["devDependencies"]
    named = dict(re.findall(r"(@?[a-z][\w/-]*)@([0-9][0-9.]*)", only(TS_SECTION, "install")))
    assert set(named) == set(pinned)
    assert all(pinned[name] == version or pinned[name].startswith(version + ".") for name, version in named.items())
    lock = json.loads((PROJECT / "package-lock.json").read_text())["packages"]
    assert all(lock[f"node_modules/{name}"]["version"] == version for name, version in pinned.items())


@pytest.mark.timeout(SLOW)
def test_typescript_clients_type_check_and_do_what_they_say(
    sandbox: str, documents: dict[str, tuple[dict[str, Any], Path]], typescript: Built
) -> None:
    """One test, so that one test process builds the TypeScript folder (``tsc`` is the costly part)."""
    # the page's examples, every operation, every request body as one type holding every field
    assert typescript.check.returncode == 0, typescript.check.stdout + typescript.check.stderr

    reset(sandbox)
    key = ROOT / "scenarios" / "keys" / "alice-es256.pem"
    done = [json.loads(line) for line in typescript.run("cefi_run", sandbox, str(key))]
    assert all(line["status"] == 200 for line in done), done
    called = [line["operation"] for line in done]
    # every operation but OAuth's (a browser's flow): CeFi, paper trading, the key exchange and refresh
    expected = {op_id for op_id in operations(documents["cefi"][0]) if not op_id.startswith("oauth_")}
    assert set(called) == expected, expected - set(called)
    assert called.count("modify_order") == 2 and called.count("create_transfer") == 2

    reset(sandbox)
    placed, modified, canceled = typescript.run("example")
    assert re.fullmatch(r"[1-9][0-9]* ACTIVE", placed) and modified == "ACTIVE 0.0200", (placed, modified)
    assert canceled == "CANCELED"

    # the control plane: reset, a clock advance of 2.5 s and three levels of depth
    before_after, *levels = typescript.run("steer")
    before, after = (int(ns) for ns in before_after.split())
    assert after - before == 2_500_000_000
    asks = [line.split() for line in levels]
    assert 1 <= len(asks) <= 3 and all(word == "ask" for word, *_ in asks)
    prices = [float(price) for _word, price, _qty, _orders in asks]
    assert prices == sorted(prices)


def test_without_node_ci_fails_with_one_line_and_elsewhere_it_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "npm" else f"/usr/bin/{name}")
    monkeypatch.setenv(NODE_REQUIRED, "1")
    with pytest.raises(pytest.fail.Exception) as failed:
        node_and_npm()
    message = str(failed.value)
    assert message.startswith(f"{NODE_REQUIRED}=1: npm not found: ") and "\n" not in message
    monkeypatch.delenv(NODE_REQUIRED)
    with pytest.raises(pytest.skip.Exception, match="npm not found"):
        node_and_npm()
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"{NODE_REQUIRED}=1 make test" in ci and 'need "the TypeScript client tests" node npm -- nodejs npm' in ci
