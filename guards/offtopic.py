"""The off-topic family of the pattern screens: work a visitor orders that is not about the owner
(a letter, homework, code, sums, translations, recommendations), in English, Dutch and German.
Spliced into ``guards.patterns.RULES`` where it always stood: the rules are tried in order."""

from __future__ import annotations

import re

from guards.grammar import Rule, seq
from guards.vocabulary import ORDERED_OBJECTS, TASK_OBJECTS, TASK_VERBS
from text import quotes

_TRANSLATE = "translate vertaal ubersetze uebersetze"

OFF_TOPIC_RULES: list[Rule] = [
    # clearly off-topic work, asked as a task (not questions about what the owner wrote)
    Rule("off_topic", "write_for_me", seq(TASK_VERBS, "me a an my the some een mijn mir einen eine ein "
                                          "meinen meine", TASK_OBJECTS, gap=2, start=True)),
    Rule("off_topic", "write_for_me", seq(TASK_VERBS, TASK_OBJECTS, gap=0, start=True)),
    Rule("off_topic", "write_for_me", seq(TASK_OBJECTS, "for_me voor_mij fur_mich", gap=0)),
    Rule("off_topic", "write_for_me", seq("je u du sie", "een mijn ein eine einen meinen", TASK_OBJECTS,
                                          "schrijven maken genereren schreiben erstellen verfassen", gap=2)),
    Rule("off_topic", "homework", seq("my mijn meine mein", "homework huiswerk hausaufgabe* "
                                      "schoolopdracht* schoolwerk", gap=1)),
    Rule("off_topic", "homework", seq("do doe mach help", "my mijn meine", "assignment* essay* opdracht* "
                                      "aufgabe*", gap=1, start=True)),
    Rule("off_topic", "code_request", seq(TASK_VERBS, "python sql java javascript typescript bash rust "
                                          "code script programm* function* funktion* functie*", gap=3,
                                          start=True)),
    # German formal imperative, anywhere: "Generieren Sie den SQL-Code ..."
    Rule("off_topic", "code_request", seq("generieren_sie erstellen_sie schreiben_sie programmieren_sie "
                                          "schreibe_mir erstelle_mir", "code* programm* skript* script* sql "
                                          "python javascript funktion*", gap=1), orders_only=True),
    # texts some owners write for a living, when ordered: "Write a headline saying ...!"
    Rule("off_topic", "write_for_me", seq(TASK_VERBS, "me a an my the some een mijn mir einen eine ein "
                                          "meinen meine", ORDERED_OBJECTS, gap=2, start=True), orders_only=True),
    Rule("off_topic", "solve", seq("solve calculate compute los bereken lose berechne", "this the_following "
                                   "my dit deze mijn diese folgende meine", gap=1, start=True)),
    # a translation of a text the message gives ("this", "the following", or one after a colon, in
    # quotes, on a new line); without one it is the conversation's ("translate that reply into
    # Spanish", "in het Frans graag"), which the twin may answer; asked, a doubt
    Rule("off_topic", "translate", seq(_TRANSLATE, "this the_following dit deze diese* folgende*", gap=3, start=True),
         orders_only=True),
    Rule("off_topic", "translate", seq(_TRANSLATE, "into to naar in ins", gap=3, start=True), orders_only=True,
         needs=re.compile(f"[:\n]|{quotes.marks()}")),
    Rule("off_topic", "recommend", seq("give recommend suggest geef raad empfiehl gib", "me mij mir",
                                       "some a een een_paar ein paar", "music movie* film* song* muziek "
                                       "recipe* recept* musik", gap=1)),
]
