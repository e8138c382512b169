"""Every code block of README.md runs verbatim and prints what the README says it prints.

Why: a README whose commands fail when pasted, or whose printed output is not what runs, is
the first thing a user meets. Each ```python block runs as a script, each ```sh block in
bash, from the repository root in a process of its own, with the environment a user has:
this one without the RELAYISH_* settings (tests/conftest.py sets some for the test session),
but RELAYISH_CACHE_DIR a temporary directory (the user's kernel cache is not touched), and
PATH starting with this interpreter's scripts directory (``python3`` and ``relayish`` are the
ones under test, as in an activated environment). A ```text block after a code block is its
exact stdout; a block with none prints nothing. Where the line before the ```text block says
"exit status N", the block must fail with status N and the text is its exact stderr.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import sysconfig

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# Blocks not run here, by how they start, with the reason.
EXEMPT = {
    'python3 -m pip install ".[examples]" && python3 -m relayish.examples.lenet':
        "set-up: installs packages; the demo is tests/examples/test_lenet_demo.py",
    'python3 -m pip install -e ".[test]" && python3 -m pytest':
        "set-up: installs packages and runs the whole suite; "
        "tests/core/test_docs_and_cli.py::test_ci_runs_the_readmes_test_command",
    "python3 bench/workloads.py":
        "benchmark: what it prints is timings, nothing to compare",
    "python3 bench/forms.py":
        "benchmarks (six scripts): what they print is timings, nothing to compare",
}


def blocks() -> list[tuple[int, str, str, str | None, str]]:
    """README's code blocks in order: (line, language, code, the following ```text block or
    None, the last prose line before that ```text block)."""
    found: list[list] = []  # [line, language, body, prose before it]
    lines = README.read_text().splitlines(keepends=True)
    prose: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            prose.append(lines[i])
            i += 1
            continue
        start, language = i + 1, lines[i][3:].strip()
        end = next(j for j in range(start, len(lines)) if lines[j].rstrip("\n") == "```")
        found.append([start, language, "".join(lines[start:end]), "".join(prose)])
        prose, i = [], end + 1
    result = []
    for k, (line, language, body, _) in enumerate(found):
        if language == "text":
            assert k > 0 and found[k - 1][1] != "text", f"README.md:{line}: a ```text block after no code block"
            continue
        assert language in ("python", "sh"), f"README.md:{line}: a ```{language} block: python, sh or text"
        after = found[k + 1] if k + 1 < len(found) and found[k + 1][1] == "text" else None
        intro = after[3].strip().splitlines()[-1] if after and after[3].strip() else ""
        result.append((line, language, body, after[2] if after else None, intro))
    return result


BLOCKS = blocks()


def exemption(code: str) -> str | None:
    return next((reason for start, reason in EXEMPT.items() if code.startswith(start)), None)


def test_every_exemption_names_one_block():
    for start in EXEMPT:
        assert sum(code.startswith(start) for _, _, code, _, _ in BLOCKS) == 1, start


RUN = [b for b in BLOCKS if exemption(b[2]) is None]  # the exempt ones are not run at all (not skips)


@pytest.mark.parametrize("line, language, code, expected, intro", RUN, ids=[f"line{b[0]}-{b[1]}" for b in RUN])
def test_block_prints_what_the_readme_says(line, language, code, expected, intro, tmp_path):
    assert not re.search(r"pip install|pytest|bench/", code), \
        f"README.md:{line} installs packages or runs tests or benchmarks: exempt it in EXEMPT, or change it"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAYISH_")}  # tests/conftest.py's
    env.update(RELAYISH_CACHE_DIR=str(tmp_path / "cache"),
               PATH=os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")]))
    if language == "python":
        script = tmp_path / "example.py"  # a file, not -c: @relay reads its function's source
        script.write_text(code)
        command = [sys.executable, str(script)]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", code]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    status = re.search(r"exit status (\d+)", intro)
    where = f"README.md:{line} ({intro or 'no output block'})\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    if status:
        assert (result.returncode, result.stdout, result.stderr) == (int(status.group(1)), "", expected), where
    else:
        assert result.returncode == 0, where
        assert result.stdout == (expected or ""), where
