"""Review s7 fixes of coplug.formulations.bbo: export formats follow the file suffix, the LLM
timeout is a deadline, deep programs round-trip through JSON, variable-exponent poles are
refused, SCIP's power limits are named, and failed writes leave nothing behind."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from coplug.formulations.bbo.export import read_program_json
from coplug.formulations.bbo.grammar import ProgramError
from coplug.formulations.bbo.llm_proposer import LLMConfig, LLMEndpointError, LLMProposer
from coplug.formulations.bbo.validate import load
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError


def _one_line_error(capsys, argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("coplug: error:") and needle in err and "\n" not in err


def test_export_format_follows_the_suffix_and_a_conflict_is_named(tmp_path, capsys) -> None:
    base = ["bbo", "export", "bbob:3", "--dim", "2"]
    assert main([*base, "-o", str(tmp_path / "f.json")]) == 0
    assert json.loads((tmp_path / "f.json").read_text())["format"] == "coplug-bbo-program"
    assert main([*base, "-o", str(tmp_path / "f.nl")]) == 0
    assert (tmp_path / "f.nl").read_text().startswith("g3")
    capsys.readouterr()
    _one_line_error(capsys, [*base, "--format", "py", "-o", str(tmp_path / "g.json")],
                    "ends in .json but the export format is py")
    _one_line_error(capsys, [*base, "-o", str(tmp_path / "g")], "unknown export format")
    assert not (tmp_path / "g.json").exists() and not (tmp_path / "g").exists()


class _Trickle(BaseHTTPRequestHandler):
    """Sends headers promising a long body, then one byte every 0.2 s."""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        for _ in range(100):
            try:
                self.wfile.write(b" ")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.2)


@pytest.fixture
def trickle() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def test_llm_timeout_is_a_deadline_for_the_whole_request(trickle: str) -> None:
    proposer = LLMProposer(2, LLMConfig(base_url=trickle, model="m", timeout=1.0, retries=0))
    start = time.monotonic()
    with pytest.raises(LLMEndpointError, match="no complete reply within 1 s"):
        proposer.propose([], 1, np.random.default_rng(0), {})
    assert time.monotonic() - start < 2.0


def test_llm_transport_failures_and_bad_urls_are_one_line_errors() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def answer_ssh() -> None:
            conn, _ = listener.accept()
            conn.recv(65536)
            conn.sendall(b"SSH-2.0-OpenSSH_9.0\r\n\r\n")
            conn.close()

        threading.Thread(target=answer_ssh, daemon=True).start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        proposer = LLMProposer(2, LLMConfig(base_url=url, model="m", timeout=5.0, retries=0))
        with pytest.raises(LLMEndpointError, match="not HTTP .status line 'SSH-2.0") as info:
            proposer.propose([], 1, np.random.default_rng(0), {})
    assert "\n" not in str(info.value)
    assert LLMConfig(base_url=" http://127.0.0.1:9/v1 \n", model="m").base_url.endswith("/v1")
    for bad, needle in (("http://[::1", "malformed"), ("http://h:x/v1", "malformed"),
                        ("ftp://h/v1", "scheme"), ("http://127.0.0.1:9/v 1", "spaces")):
        with pytest.raises(InputError, match=needle):
            LLMConfig(base_url=bad, model="m")


def test_deep_programs_round_trip_through_their_json_export(tmp_path, capsys) -> None:
    for name, text in (("sum", " + ".join(["x[0]"] * 300)), ("neg", "-" * 300 + "x[1]")):
        source = tmp_path / f"{name}.txt"
        source.write_text(text)
        out = tmp_path / f"{name}.json"
        assert main(["bbo", "export", str(source), "--dim", "2", "-o", str(out)]) == 0
        back = read_program_json(out.read_text(), str(out))
        assert back.text == load(text, 2).text
        assert main(["bbo", "solve", str(out), "--time-limit", "5"]) == 0
        assert "certified  True" in capsys.readouterr().out
    with pytest.raises(ProgramError, match=r"nested \d+ levels deep \(max 360\)"):
        load(" + ".join(["x[0]"] * 400), 2)


@pytest.mark.parametrize("text", ["abs(x[0] - 0.3) ** (0 * x[1] - 0.5)",
                                  "-(abs(x[0] - 0.3) ** (-1 - 0.1 * abs(x[1])))"])
def test_a_pole_through_a_variable_negative_exponent_is_rejected(text: str) -> None:
    with pytest.raises(ProgramError, match="denominator abs.x.0. - 0.3. cannot be shown"):
        load(text, 2)
    assert load("sum(abs(x) ** (x / 5 + 1)) + (abs(x[0]) + 0.5) ** (x[1] - 3)", 2).dim == 2


def test_solve_names_a_variable_power_whose_base_reaches_zero(capsys) -> None:
    assert main(["bbo", "solve", "sum(abs(x) ** (x / 5 + 1))", "--dim", "2",
                 "--time-limit", "5"]) == 0
    reason = capsys.readouterr().out.split("reason     ")[1]
    assert reason.startswith("SCIP cannot take x ** y with a variable exponent y when the "
                             "base x can reach 0, unless y >= 1")
    assert "(abs(x[0])) ** (0.2*x[0] + 1.0)" in reason and "float()" not in reason


def test_failed_exports_name_the_path_and_leave_no_file(tmp_path, capsys) -> None:
    (tmp_path / "d.gms").mkdir()
    _one_line_error(capsys, ["bbo", "export", "bbob:3", "--dim", "2", "-o",
                             str(tmp_path / "nodir" / "x.gms")], "cannot write")
    _one_line_error(capsys, ["bbo", "export", "bbob:3", "--dim", "2", "-o",
                             str(tmp_path / "d.gms")], "Is a directory")
    _one_line_error(capsys, ["bbo", "export", "sin(x[0]) + x[1]", "--dim", "2", "-o",
                             str(tmp_path / "s.lp")], "cannot write this program as .lp")
    assert main(["bbo", "export", "bbob:3", "--dim", "2", "-o", str(tmp_path / "f.nl")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.gms", "f.col", "f.nl", "f.row"]


def test_run_directory_entries_in_the_way_are_refused_before_any_work(tmp_path) -> None:
    from coplug.formulations.bbo.evolve import RunWriter

    (tmp_path / "a" / "config.json").mkdir(parents=True)  # raised IsADirectoryError after a
    with pytest.raises(InputError, match="config.json exists and is not a file"):  # generation
        RunWriter(tmp_path / "a", overwrite=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "front").write_text("")
    with pytest.raises(InputError, match="front exists and is not a directory"):
        RunWriter(tmp_path / "b", overwrite=True)
    RunWriter(tmp_path / "c" / "run")  # proven writable up front, then left as it was
    assert not (tmp_path / "c").exists()
    with pytest.raises(InputError, match="cannot write run directory"):
        RunWriter(Path("/proc/coplug_run"))  # passes os.access even as root
