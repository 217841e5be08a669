"""The version of the rules that derive links at index time (supersession and copies:
gitmem/index/supersede.py, and the readings it uses: parse/entities.py `subject`, parse/attributes.py).

Derived links are stored in the index as of the rules that derived them. When an upgrade changes
those rules, the links already in an index would stay as the old rules made them until a rebuild,
and a user would have to know to ask for one. So the index records the version that derived its
links (meta key DERIVED_RULES) and `indexer.update` derives them again, from the stored chunks,
whenever it differs from RULES: `gitmem index`, recall's catch-up and the hook's background run do;
the post-commit hook itself only hands that work to its background run (it must stay light).

The same version covers the entities of the chunks of a page in a folder of bank/
(`indexer._page_entities`) and the readings stored with each chunk version (`chunks.last_day`:
index/dating.py; the `readings` table: index/readings.py), derived again with the links. RULES is the one place this version lives: bump it
in the same commit as any change that makes supersede.py (or a reading it calls) link other pairs
than before, dating.py (or a reading it calls) read another day, or readings.py (or a reading it
calls: parse.entities `subject` / `relation`, parse.attributes `said` / ENDS_STATE, parse.mood
`intends` / `no_present_value` / `reported`, supersede `content_words` / `is_event` / `told_of_past`)
read anything else. Imported by the hook path: no
imports beyond the index's meta table.
"""

from __future__ import annotations

import sqlite3

from gitmem.index.db import get_meta

# History: "1" the links as wave 8 derived them (an index without the key was built before any
# version was recorded and counts as stale); "2" wave 9: a relation standing alone ("@Gideon: My
# climbing partner; ...") names the filed entity (parse/entities.py `subject`); a memory told again
# supersedes nothing (supersede.told_of_past); a move reported as an event ("Moved to Porto on ...")
# is a home a later one replaces, and a clause ending in "now" is a cue for its attribute; "3" wave 12:
# a dream, a lost bid or a story retold supersedes nothing (parse/mood.py `no_present_value`); "4" wave
# 13: each chunk version's last day (index/dating.py) is stored with it, read by these rules; "5" wave
# 14: a line whose subject is a relation of a wider class or owned by a name without "@" ("Her
# flatmate Awino moved out", "Ana's husband sold the car") is someone else's (parse/entities.py `subject`),
# and a state's last day is read from more bounded periods ("for a month", "July only", "this
# semester": parse/dates.py); "6" wave 15: another @person's thing opening the clause is theirs ("@Gwendolyn:
# @Ceridwen's retirement do ...", "His clubmate Sorin ...": parse/entities.py `subject`), "up to" an amount is no end (parse/dates.py
# `ends`), and a past intention, a conditional future, a span of a life talked about and hearsay say
# nothing of now (parse/mood.py); "7" wave 18: a plan, a wish or a condition (parse/mood.py `intends`)
# replaces no state, only another plan; a dream told with a contracted auxiliary ("Dreamt she'd moved")
# is a dream; "8" wave 19: what recall's recency rules read of a statement whatever is asked is stored
# with each chunk version (index/readings.py), and a name ending in "-ed" ("@Ulfried:", "@Khaled:")
# opens no past tense (parse/attributes.py OPENING): such a person's states were all read as events
# (never superseded, no last day); "9" wave 20: a line that names no one on a page in a folder of bank/
# whose outermost heading names the page's file ("# Kazue" on bank/people/kazue.md) is that entity's
# (parse/entities.py `page_entity`): `rederive` gives the stored chunks their entity first; a move
# ("Moved to Arisaig over the summer") names no last day (index/dating.py `open_end`); "10" wave 20: "for
# a living" names no home (parse/attributes.py `livelihood_only`): "Repairs violins for a living" was
# replaced by a move as if it said where he lives; "11" wave 21: "new" is a cue for the word after it only
# when that word is the new thing, not a modifier of another (index/supersede.py `_heads`): "New office
# policy" replaced "Takes the 7:12 train on office days"; and a move to a place the older line already
# names as its state replaces nothing ("@Peter lives in Lisbon" written the morning of the move, then
# "Moved from Berlin to Lisbon": supersede `_told_first`, parse.attributes `move_places`); "12" wave 21:
# a line its writer marks as a joke gives no present value, and "if ... he's moving" is a condition
# (parse/mood.py `_JOKE`, `_THEN_OR_IF`): "Said if the heating bill goes up again he's moving to the
# Faroes with the sheep. (Joking.)" replaced "Lives on a farm outside Võru with forty sheep"; "13" wave 22:
# a plan carried out (supersede `_carries_out`, parse/mood.py `planned_target` / `plans`) and "fixed" /
# "resolved" (not a fixed rate, term, price ...) replace the state they changed: the demo's "Runs Postgres
# 16; upgrade to 17 planned" stayed current after "Now on ... Postgres 17", and a crash after "I fixed" it.
RULES = "13"
DERIVED_RULES = "derived_rules"


def stale(conn: sqlite3.Connection) -> bool:
    """Whether the index's derived links were made by other rules than this code's (one meta read)."""
    return get_meta(conn, DERIVED_RULES) != RULES
