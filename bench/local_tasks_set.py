"""The embedded model's task set: 16 small tasks, each a (files, request, check) triple.

Every task starts from `files` in a fresh git repository; `check(cwd, events)` judges the
outcome — the files afterwards, the commands in the `--json` events, or the exact answer —
never what the model says it did, and returns (solved, why). The tasks are varied on purpose
(create and run, fix from a failing test or an expected output, add a function with its
test, questions answered only by a project file, find a definition, count data, rename
across files, structured edits, an AGENTS.md rule, a check command the user names, shell and
JavaScript), so that tuning the harness to one of them does not pay.
"""

import json
import os
import re
import subprocess
import tomllib

import yaml


def run_cmd(cwd, *argv):
    return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=60)


def python(cwd, *args):
    return run_cmd(cwd, "python3", *args)


def ran_successfully(events, pattern):
    """True when a command the agent ran exited 0 and its command line or output matches
    the regular expression `pattern`."""
    for e in events:
        item = e.get("item", {})
        if (e.get("type") == "item.completed" and item.get("type") == "command_execution"
                and item.get("exit_code") == 0
                and re.search(pattern, item.get("command", "") + "\n"
                              + item.get("aggregated_output", ""))):
            return True
    return False


def final_message(events):
    texts = [e["item"].get("text", "") for e in events
             if e.get("type") == "item.completed"
             and e.get("item", {}).get("type") == "agent_message"]
    return texts[-1] if texts else ""


def read(cwd, name):
    path = os.path.join(cwd, name)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return f.read()


def answer_has(events, pattern, label):
    message = final_message(events)
    if not re.search(pattern, message):
        return False, f"answer {message[:160]!r} lacks {label}"
    return True, "ok"


# --- hello: create and run -------------------------------------------------------------

def check_hello(cwd, events):
    if read(cwd, "hello.py") is None:
        return False, "hello.py missing"
    out = python(cwd, "hello.py")
    if "hello" not in out.stdout.lower():
        return False, f"hello.py printed {out.stdout!r} {out.stderr[-200:]!r}"
    if not ran_successfully(events, r"hello\.py"):
        return False, "hello.py was not run successfully"
    return True, "ok"


# --- add: a function plus its test -----------------------------------------------------

def check_add(cwd, events):
    for name in ("add.py", "test_add.py"):
        if read(cwd, name) is None:
            return False, f"{name} missing"
    out = python(cwd, "-c", "from add import add; assert add(2, 3) == 5 and add(-1, 1) == 0")
    if out.returncode != 0:
        return False, f"add is wrong: {out.stderr[-200:]!r}"
    out = python(cwd, "-m", "unittest", "test_add")
    if out.returncode != 0 or "Ran 0 tests" in out.stderr:
        return False, f"test_add fails or tests nothing: {out.stderr[-300:]!r}"
    if not ran_successfully(events, r"Ran [1-9]\d* tests?"):
        return False, "the tests were not run successfully"
    return True, "ok"


# --- fix: a failing assertion ----------------------------------------------------------

FIX_STATS = '''def average(values):
    """Return the arithmetic mean of a non-empty list of numbers."""
    total = 0
    for value in values:
        total += value
    return total / (len(values) + 1)
'''

FIX_TEST = '''import unittest

from stats import average


class AverageTest(unittest.TestCase):
    def test_average_of_three(self):
        self.assertEqual(average([2, 4, 6]), 4)


if __name__ == "__main__":
    unittest.main()
'''


def check_fix(cwd, events):
    if read(cwd, "test_stats.py") != FIX_TEST:
        return False, "the test was changed instead of the code"
    out = python(cwd, "-m", "unittest", "test_stats")
    if out.returncode != 0:
        return False, f"test still fails: {out.stderr[-300:]!r}"
    out = python(cwd, "-c", "from stats import average; assert average([1, 2]) == 1.5")
    if out.returncode != 0:
        return False, "average is only right for the tested input"
    if not ran_successfully(events, r"Ran [1-9]\d* tests?"):
        return False, "the fixed test was not run"
    return True, "ok"


# --- answer: a fact only a config file holds -------------------------------------------

ANSWER_FILES = {
    "README.md": "# ledger\n\nBookkeeping service. Deployment settings live in deploy/.\n",
    "deploy/service.toml": '[service]\nname = "ledger"\nport = 8731\nreplicas = 3\n',
    "src/main.py": "def main():\n    print('ledger')\n",
}


def check_answer(cwd, events):
    return answer_has(events, r"\b8731\b", "8731")


# --- pages: fix a bug given the expected output (integer result) -----------------------

PAGES = '''def pages(items, per_page):
    """How many pages are needed to show `items` entries, `per_page` on each page."""
    return items // per_page


if __name__ == "__main__":
    print(pages(10, 3))
'''


def check_pages(cwd, events):
    out = python(cwd, "pages.py")
    if out.stdout.strip() != "4":
        return False, f"pages.py printed {out.stdout.strip()!r} {out.stderr[-200:]!r}"
    probe = ("from pages import pages\n"
             "cases = [((9, 3), 3), ((1, 3), 1), ((0, 5), 0), ((11, 5), 3)]\n"
             "for args, want in cases:\n"
             "    got = pages(*args)\n"
             "    assert got == want and type(got) is int, (args, got)\n")
    out = python(cwd, "-c", probe)
    if out.returncode != 0:
        return False, f"pages is wrong in general: {out.stderr.strip()[-200:]!r}"
    if not ran_successfully(events, r"pages\.py"):
        return False, "pages.py was not run after the fix"
    return True, "ok"


# --- where: find where something is defined --------------------------------------------

WHERE_FILES = {
    "app.py": "from net.http import parse_header\n\n\ndef handle(raw):\n"
              "    return parse_header(raw.split('\\n')[0])\n",
    "net/__init__.py": "",
    "net/http.py": "def parse_header(line):\n    name, _, value = line.partition(':')\n"
                   "    return name.strip().lower(), value.strip()\n",
    "net/client.py": "from net.http import parse_header\n\n\ndef fetch(url):\n"
                     "    return parse_header('Host: ' + url)\n",
    "README.md": "# tiny web tools\n",
}


def check_where(cwd, events):
    return answer_has(events, r"net/http\.py", "net/http.py")


# --- count: count rows in a data file --------------------------------------------------

SALES_ROWS = [("north", 120), ("south", 80), ("north", 45), ("east", 60), ("west", 75),
              ("north", 30), ("south", 95), ("east", 20), ("north", 110), ("west", 15),
              ("south", 40), ("north", 85), ("east", 55), ("west", 65), ("north", 25),
              ("south", 70), ("east", 35), ("north", 50), ("west", 90), ("south", 10)]
SALES_CSV = "region,amount\n" + "".join(f"{r},{a}\n" for r, a in SALES_ROWS)
NORTH_ROWS = sum(1 for r, _ in SALES_ROWS if r == "north")  # 7


def check_count(cwd, events):
    return answer_has(events, rf"(?<![\d.]){NORTH_ROWS}(?!\d|\.\d)", str(NORTH_ROWS))


# --- total: summarise a column ---------------------------------------------------------

EXPENSES_CSV = ("date,item,amount\n2026-01-03,paper,12\n2026-01-05,toner,48\n"
                "2026-01-09,coffee,23\n2026-01-14,cables,31\n2026-01-20,chairs,240\n"
                "2026-01-28,lamps,66\n")
EXPENSES_TOTAL = 12 + 48 + 23 + 31 + 240 + 66  # 420


def check_total(cwd, events):
    return answer_has(events, rf"(?<![\d.]){EXPENSES_TOTAL}(?!\d|\.\d)", str(EXPENSES_TOTAL))


# --- rename: a symbol across several files ---------------------------------------------

RENAME_FILES = {
    "tax.py": "RATE = 0.2\n\n\ndef calc_tax(amount):\n    return round(amount * RATE, 2)\n",
    "invoice.py": "from tax import calc_tax\n\n\ndef invoice_total(amount):\n"
                  "    return amount + calc_tax(amount)\n",
    "test_invoice.py": "import unittest\n\nfrom invoice import invoice_total\n"
                       "from tax import calc_tax\n\n\nclass InvoiceTest(unittest.TestCase):\n"
                       "    def test_tax(self):\n        self.assertEqual(calc_tax(100), 20.0)\n\n"
                       "    def test_total(self):\n"
                       "        self.assertEqual(invoice_total(100), 120.0)\n\n\n"
                       "if __name__ == \"__main__\":\n    unittest.main()\n",
}


def check_rename(cwd, events):
    for name in RENAME_FILES:
        text = read(cwd, name)
        if text is None:
            return False, f"{name} is gone"
        if "calc_tax" in text:
            return False, f"{name} still mentions calc_tax"
    if "def compute_tax(" not in (read(cwd, "tax.py") or ""):
        return False, "tax.py does not define compute_tax"
    out = python(cwd, "-m", "unittest", "test_invoice")
    if out.returncode != 0 or "Ran 2 tests" not in out.stderr:
        return False, f"the tests fail after the rename: {out.stderr[-300:]!r}"
    return True, "ok"


# --- json: edit a JSON file keeping it valid -------------------------------------------

JSON_CONFIG = {"name": "webapp", "debug": True, "port": 8080,
               "database": {"host": "localhost", "pool": 5}}


def check_json(cwd, events):
    try:
        data = json.loads(read(cwd, "config.json") or "")
    except json.JSONDecodeError as e:
        return False, f"config.json is not valid JSON: {e}"
    if data.get("debug") is not False:
        return False, f"debug is {data.get('debug')!r}"
    if data.get("retries") != 3 or type(data.get("retries")) is not int:
        return False, f"retries is {data.get('retries')!r}"
    rest = {k: v for k, v in data.items() if k not in ("debug", "retries")}
    want = {k: v for k, v in JSON_CONFIG.items() if k != "debug"}
    if rest != want:
        return False, f"other settings changed: {rest!r}"
    return True, "ok"


# --- toml: edit a TOML file keeping it valid -------------------------------------------

PYPROJECT = ('[project]\nname = "shelf"\nversion = "1.2.0"\ndescription = "Book shelf"\n'
             'dependencies = [\n    "click>=8",\n]\n\n[tool.black]\nline-length = 100\n')


def check_toml(cwd, events):
    try:
        data = tomllib.loads(read(cwd, "pyproject.toml") or "")
    except tomllib.TOMLDecodeError as e:
        return False, f"pyproject.toml is not valid TOML: {e}"
    project = data.get("project", {})
    if project.get("version") != "1.3.0":
        return False, f"version is {project.get('version')!r}"
    deps = project.get("dependencies", [])
    if "click>=8" not in deps or not any(d.startswith("requests") for d in deps):
        return False, f"dependencies are {deps!r}"
    if data.get("tool", {}).get("black", {}).get("line-length") != 100 \
            or project.get("name") != "shelf":
        return False, "other settings changed"
    return True, "ok"


# --- yaml: edit a YAML file keeping it valid -------------------------------------------

CI_YAML = ("name: tests\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
           "    steps:\n      - uses: actions/checkout@v4\n"
           "      - uses: actions/setup-python@v5\n        with:\n"
           "          python-version: \"3.10\"\n      - run: python -m unittest\n")


def check_yaml(cwd, events):
    try:
        data = yaml.safe_load(read(cwd, ".github/workflows/ci.yml") or "")
    except yaml.YAMLError as e:
        return False, f"ci.yml is not valid YAML: {e}"
    try:
        steps = data["jobs"]["test"]["steps"]
        version = steps[1]["with"]["python-version"]
    except (KeyError, IndexError, TypeError):
        return False, "the workflow's structure changed"
    if str(version) != "3.12":
        return False, f"python-version is {version!r}"
    if len(steps) != 3 or steps[2].get("run") != "python -m unittest":
        return False, "the other steps changed"
    return True, "ok"


# --- agents: follow an AGENTS.md instruction -------------------------------------------

AGENTS_FILES = {
    "AGENTS.md": "# Rules for this repository\n\n"
                 "Every Python file must start with this exact first line:\n\n"
                 "# SPDX-License-Identifier: MIT\n",
    "util.py": "# SPDX-License-Identifier: MIT\n\n\ndef double(x):\n    return 2 * x\n",
}


def check_agents(cwd, events):
    text = read(cwd, "greet.py")
    if text is None:
        return False, "greet.py missing"
    if text.splitlines()[:1] != ["# SPDX-License-Identifier: MIT"]:
        return False, f"greet.py starts with {text.splitlines()[:1]!r}"
    out = python(cwd, "-c", "from greet import greet; assert greet('Ada') == 'Hello, Ada!'")
    if out.returncode != 0:
        return False, f"greet is wrong: {out.stderr.strip()[-200:]!r}"
    return True, "ok"


# --- named: the check is a command the user names --------------------------------------

NAMED_FILES = {
    "text_utils.py": "def shout(text):\n    return text.upper() + '!'\n",
    "check.sh": "#!/bin/sh\nset -e\npython3 -c \"from text_utils import slugify, shout\n"
                "assert slugify('Hello World') == 'hello-world', slugify('Hello World')\n"
                "assert slugify('A b c') == 'a-b-c'\nassert shout('hi') == 'HI!'\"\n"
                "echo 'all checks passed'\n",
}


def check_named(cwd, events):
    if read(cwd, "check.sh") != NAMED_FILES["check.sh"]:
        return False, "check.sh was changed"
    out = run_cmd(cwd, "sh", "check.sh")
    if out.returncode != 0:
        return False, f"check.sh fails: {out.stderr.strip()[-200:]!r}"
    if not ran_successfully(events, r"all checks passed"):
        return False, "the agent did not run check.sh successfully"
    return True, "ok"


# --- shell: write and run a shell script -----------------------------------------------

NOTES = "buy milk\ncall Ann\nfix the bike\nwater plants\nbook train\n"


def check_shell(cwd, events):
    if read(cwd, "count_lines.sh") is None:
        return False, "count_lines.sh missing"
    with open(os.path.join(cwd, "other.txt"), "w") as f:
        f.write("a\nb\nc\n")
    for name, want in (("notes.txt", "5"), ("other.txt", "3")):
        out = run_cmd(cwd, "bash", "count_lines.sh", name)
        if out.stdout.strip() != want:
            return False, f"count_lines.sh {name} printed {out.stdout.strip()!r}, want {want}"
    if not ran_successfully(events, r"count_lines\.sh"):
        return False, "count_lines.sh was not run"
    return True, "ok"


# --- fizz: create and run JavaScript ---------------------------------------------------

FIZZ_OUT = "\n".join("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0
                     else "Buzz" if i % 5 == 0 else str(i) for i in range(1, 16))


def check_fizz(cwd, events):
    if read(cwd, "fizz.js") is None:
        return False, "fizz.js missing"
    out = run_cmd(cwd, "node", "fizz.js")
    if out.stdout.strip() != FIZZ_OUT:
        return False, f"fizz.js printed {out.stdout.strip()[:80]!r}"
    if not ran_successfully(events, r"node\s+\S*fizz\.js"):
        return False, "fizz.js was not run with node"
    return True, "ok"


# --- maxjs: fix a JavaScript bug given the expected output -----------------------------

MAX_JS = '''function largest(numbers) {
  let best = numbers[0];
  for (const n of numbers) {
    if (n < best) {
      best = n;
    }
  }
  return best;
}

module.exports = { largest };

if (require.main === module) {
  console.log(largest([4, 9, 1, 7]));
}
'''


def check_maxjs(cwd, events):
    out = run_cmd(cwd, "node", "max.js")
    if out.stdout.strip() != "9":
        return False, f"node max.js printed {out.stdout.strip()!r} {out.stderr[-200:]!r}"
    out = run_cmd(cwd, "node", "-e", "const {largest} = require('./max.js');"
                  "if (largest([-5, -2, -9]) !== -2 || largest([3]) !== 3) process.exit(1);")
    if out.returncode != 0:
        return False, "largest is wrong for other inputs (or no longer exported)"
    if not ran_successfully(events, r"node\s+\S*max\.js"):
        return False, "max.js was not run after the fix"
    return True, "ok"


TASKS = {
    "hello": ({}, "Create hello.py that prints hello, then run it.", check_hello),
    "add": ({}, "Create add.py with a function add(a, b) that returns the sum of a and b, "
            "and test_add.py with a unittest test case for add. Then run the tests with "
            "python3 -m unittest.", check_add),
    "fix": ({"stats.py": FIX_STATS, "test_stats.py": FIX_TEST},
            "The test fails when I run python3 -m unittest test_stats. Find the bug in "
            "stats.py, fix it, and run the test again.", check_fix),
    "answer": (ANSWER_FILES, "Which port does the ledger service listen on? The answer is "
               "in the files of this project. Reply with the number.", check_answer),
    "pages": ({"pages.py": PAGES},
              "python3 pages.py should print 4 (10 items, 3 per page need 4 pages) but it "
              "prints 3. Fix the pages function so it rounds up, and run python3 pages.py "
              "to check.", check_pages),
    "where": (WHERE_FILES, "In which file is the function parse_header defined? Reply with "
              "the file's path.", check_where),
    "count": ({"sales.csv": SALES_CSV}, "How many rows of sales.csv have the region north? "
              "Reply with the number.", check_count),
    "total": ({"expenses.csv": EXPENSES_CSV}, "What is the sum of the amount column in "
              "expenses.csv? Reply with the number.", check_total),
    "rename": (RENAME_FILES, "Rename the function calc_tax to compute_tax everywhere in "
               "this project, so that python3 -m unittest still passes.", check_rename),
    "json": ({"config.json": json.dumps(JSON_CONFIG, indent=2) + "\n"},
             "In config.json, set debug to false and add a setting retries with the value "
             "3. Keep config.json valid JSON.", check_json),
    "toml": ({"pyproject.toml": PYPROJECT}, "In pyproject.toml, change the version to "
             "1.3.0 and add requests to the dependencies.", check_toml),
    "yaml": ({".github/workflows/ci.yml": CI_YAML}, "In .github/workflows/ci.yml, change the "
             "Python version from 3.10 to 3.12. Keep the file valid YAML.", check_yaml),
    "agents": (AGENTS_FILES, "Create greet.py with a function greet(name) that returns "
               "'Hello, NAME!' with the given name, for example greet('Ada') returns "
               "'Hello, Ada!'.", check_agents),
    "named": (NAMED_FILES, "Add a function slugify(text) to text_utils.py that lowercases "
              "the text and replaces spaces with hyphens. Check your work with sh check.sh.",
              check_named),
    "shell": ({"notes.txt": NOTES}, "Write a bash script count_lines.sh that prints the "
              "number of lines in the file given as its first argument, then run it on "
              "notes.txt.", check_shell),
    "fizz": ({}, "Create fizz.js that prints the numbers 1 to 15, one per line, but Fizz "
             "for multiples of 3, Buzz for multiples of 5 and FizzBuzz for multiples of "
             "both. Run it with node.", check_fizz),
    "maxjs": ({"max.js": MAX_JS}, "node max.js should print 9, the largest number, but it "
              "prints 1. Fix the largest function in max.js and run node max.js to check.",
              check_maxjs),
}
