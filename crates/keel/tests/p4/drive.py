"""Drives a Keel server's P4 listener with P4Python, as a user's script would.

Reads a JSON list of steps on stdin, runs them in order and prints one JSON object per step.
A step is an object:
  {"cmd": ["client", "-o"]}            p4.run(*cmd)
  {"method": "fetch_client", "args": []}   any P4 method by name (run_login, save_client, ...)
  "tagged": false                     untagged output for this step (default tagged)
  "user", "client", "password", "host", "prog", "port", "ticket_file", "ignore_file":
                                      connection settings (a change reconnects)
  "new": true                         a fresh connection before the step
  "input": ...                        p4.input (text, dict or list)
  "cwd": "DIR"                        p4.cwd for this step (relative file arguments)
  "editor": "PROGRAM"                 P4EDITOR from this step on (a form sent to the editor;
                                      a change reconnects)
  "progress": true                     a P4.Progress for this step; the step's "progress" lists
                                      each call it got ([method, args...])
  "resolver": "am"                    p4.run_resolve(*cmd[1:], resolver=R): R answers every
                                      merge with this ("at", "ay", "am", "ae", "s") and the
                                      step's "merges" lists what it was shown (names, hint)
The printed object carries "result" (the output, specs as dicts with "spec_class" naming the
type), "errors", "warnings", "messages" (severity and generic code of each), and "exception"
when one was raised. A step never stops the script: the next step runs on a fresh
connection after an exception that dropped the connection.
"""

import json
import os
import sys

import P4


def plain(value):
    if isinstance(value, P4.Spec):
        out = {k: plain(v) for k, v in value.items()}
        out["spec_class"] = type(value).__name__
        return out
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


class Answer(P4.Resolver):
    """A resolver that answers every merge the same way and remembers what it saw."""

    def __init__(self, answer):
        P4.Resolver.__init__(self)
        self.answer = answer
        self.seen = []

    def resolve(self, merge):
        seen = {}
        for name in ("your_name", "their_name", "base_name", "merge_hint"):
            seen[name] = getattr(merge, name, None)
        # A binary (two-way) merge has no result or base file, only theirs beside yours.
        for key, path in (("result", merge.result_path), ("theirs", merge.their_path)):
            if path:
                with open(path, "rb") as f:
                    seen[key] = f.read().decode("utf-8", "replace")
        seen["has_base_path"] = merge.base_path is not None
        self.seen.append(seen)
        if self.answer == "ae":
            # Accepting an edit: the user rewrote the result file first.
            with open(merge.result_path, "wb") as f:
                f.write(b"edited by the resolver\n")
        return self.answer


class Record(P4.Progress):
    """A progress indicator that remembers every call the client made."""

    def __init__(self):
        P4.Progress.__init__(self)
        self.calls = []

    def init(self, type):
        self.calls.append(["init", type])

    def setDescription(self, description, unit):
        self.calls.append(["setDescription", description, unit])

    def setTotal(self, total):
        self.calls.append(["setTotal", total])

    def update(self, position):
        self.calls.append(["update", position])

    def done(self, fail):
        self.calls.append(["done", fail])


def main():
    steps = json.load(sys.stdin)
    settings = {
        "port": os.environ["P4PORT"],
        "user": os.environ.get("P4USER", "alice"),
        "client": os.environ.get("P4CLIENT", "alice_ws"),
        "host": "p4host",
        "password": "",
        "prog": "keel-p4-suite",
        "ticket_file": os.environ.get("P4TICKETS", ""),
        "editor": os.environ.get("P4EDITOR", "false"),
        "ignore_file": "",
    }
    p4 = None
    for step in steps:
        changed = False
        for key in settings:
            if key in step and step[key] != settings[key]:
                settings[key] = step[key]
                changed = True
        if p4 is not None and (changed or step.get("new") or not p4.connected()):
            try:
                p4.disconnect()
            except P4.P4Exception:
                pass
            p4 = None
        out = {}
        try:
            if p4 is None:
                # The client reads P4EDITOR when it connects.
                os.environ["P4EDITOR"] = settings["editor"]
                p4 = P4.P4()
                p4.port = settings["port"]
                p4.user = settings["user"]
                p4.client = settings["client"]
                p4.host = settings["host"]
                p4.prog = settings["prog"]
                if settings["ticket_file"]:
                    p4.ticket_file = settings["ticket_file"]
                if settings["password"]:
                    p4.password = settings["password"]
                if settings["ignore_file"]:
                    p4.ignore_file = settings["ignore_file"]
                p4.exception_level = 1
                p4.connect()
                fresh = True
            else:
                fresh = False
            p4.tagged = step.get("tagged", True)
            if "input" in step:
                p4.input = step["input"]
            if "cwd" in step:
                p4.cwd = step["cwd"]
            if step.get("progress"):
                recorder = Record()
                result = p4.run(*step["cmd"], progress=recorder)
                out["progress"] = recorder.calls
            elif "resolver" in step:
                answer = Answer(step["resolver"])
                result = p4.run_resolve(*step["cmd"][1:], resolver=answer)
                out["merges"] = answer.seen
            elif "method" in step:
                result = getattr(p4, step["method"])(*step.get("args", []))
            else:
                result = p4.run(*step["cmd"])
            out["result"] = plain(result)
            if fresh:
                # Known once a command ran (an untrusted ssl: server never gets that far).
                out["server_level"] = p4.server_level
        except P4.P4Exception as e:
            out["exception"] = str(e)
        except Exception as e:  # a client-side failure is a result too
            out["exception"] = "%s: %s" % (type(e).__name__, e)
        if p4 is not None:
            out["errors"] = list(p4.errors)
            out["warnings"] = list(p4.warnings)
            out["messages"] = [
                {"severity": m.severity, "generic": m.generic, "msgid": m.msgid, "text": str(m)}
                for m in p4.messages
            ]
        print(json.dumps(out), flush=True)
    if p4 is not None and p4.connected():
        p4.disconnect()


main()
