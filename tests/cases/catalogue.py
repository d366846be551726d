"""The misconception catalogue as api/grading/misconceptions_*.c writes
it: {code: (explanation, instructor text or None)}, read from the C
source (texts two catalogues share are macros of misconceptions.h), so
that data cases and tests quote the texts the server sends without a
second copy. Standard library only."""

import glob
import json
import os
import re

GRADING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "..", "api", "grading")
STRING = r'"(?:[^"\\]|\\.)*"'
# {"code", explanation, instructor text or NULL, answer function}
ENTRY = re.compile(r'\{"([a-z]+\.[a-z_0-9]+)",\s*((?:%s\s*)+),\s*'
                   r'(NULL|(?:%s\s*)+),\s*[a-z_0-9]+\}' % (STRING, STRING))


def _text(literals):
    return "".join(json.loads(x) for x in re.findall(STRING, literals))


def read():
    with open(os.path.join(GRADING, "misconceptions.h"),
              encoding="utf-8") as f:
        shared = {name: " ".join(re.findall(STRING, text)) for name, text in
                  re.findall(r'#define (API_[A-Z0-9_]+)((?:\s*\\?\s*%s)+)'
                             % STRING, f.read())}
    entries = {}
    for path in sorted(glob.glob(os.path.join(GRADING,
                                              "misconceptions_*.c"))):
        with open(path, encoding="utf-8") as f:
            source = re.sub(r"\bAPI_[A-Z0-9_]+\b",
                            lambda m: shared.get(m.group(0), m.group(0)),
                            f.read())
        for code, text, note in ENTRY.findall(source):
            entries[code] = (_text(text),
                             None if note == "NULL" else _text(note))
    return entries
