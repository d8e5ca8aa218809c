"""Writes the `fictional_multihop` task's data (tasks/fictional_multihop/data/): a fictional world of countries,
cities, organisations and people rendered as short Wikipedia-style passages, and multi-hop questions over it
with their answers and supporting passage ids.

Everything comes from one `random.Random(SEED)`, so the files are the same bytes on every run
(tests/tasks/fictional_multihop/test_fictional_multihop.py checks the committed ones against a fresh run):

    python tools/make_fictional_multihop.py [--out DIR]

Question types, interleaved so that any `--limit` holds each of them in turn (HotpotQA's and 2Wiki's kinds):
  bridge_2hop       a person's employer's headquarters city (person -> organisation)
  founder_2hop      who founded the organisation a person works for (person -> organisation)
  bridge_3hop       the country where an organisation's founder was born (organisation -> person -> city)
  compare_people    which of two people was born first (two person passages)
  compare_orgs      which of two organisations was founded first (two organisation passages)
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path

SEED = 48
COUNTRIES, CITIES, ORGANISATIONS, PEOPLE = 40, 400, 500, 2000
QUESTIONS_PER_TYPE = 60
DATA = Path(__file__).resolve().parent.parent / "tasks" / "fictional_multihop" / "data"
CORPUS_FILE, QUESTIONS_FILE = "corpus.jsonl", "questions.jsonl"

ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s", "st", "t", "tr", "v", "z")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou")
CODAS = ("", "", "l", "n", "r", "s", "th", "nd", "rk", "x")
ORG_KINDS = ("Systems", "Works", "Institute", "Foundry", "Press", "Bank", "Laboratories", "Shipping", "Mills", "Guild")
OCCUPATIONS = (
    "engineer",
    "botanist",
    "architect",
    "economist",
    "painter",
    "physician",
    "historian",
    "chemist",
    "cartographer",
    "composer",
    "journalist",
    "astronomer",
)
FIELDS = (
    "machine tools",
    "river shipping",
    "printing",
    "textiles",
    "optics",
    "banking",
    "glassware",
    "railway signals",
    "chemistry",
    "clockwork",
    "ceramics",
    "cartography",
)
TERRAIN = (
    "a river delta",
    "a mountain pass",
    "a coastal plain",
    "a chain of lakes",
    "a high plateau",
    "a forest basin",
)


@dataclass
class Person:
    id: str
    name: str
    born: int
    city: int
    occupation: str
    employer: int


@dataclass
class Organisation:
    id: str
    name: str
    founded: int
    city: int
    founder: int
    field: str


class Names:
    """Unique invented names (a name never repeats across the world, so a question names one entity)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set()

    def word(self, syllables: int) -> str:
        while True:
            text = "".join(self.rng.choice(ONSETS) + self.rng.choice(VOWELS) for _ in range(syllables))
            text = (text + self.rng.choice(CODAS)).capitalize()
            if text not in self.used:
                self.used.add(text)
                return text


def build(seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """The corpus rows ({id, title, text}) and the questions ({id, question, answers, type, hops, supporting_ids})."""
    rng = random.Random(seed)
    names = Names(rng)
    countries = [names.word(2) + rng.choice(("ia", "land", "mark", "stan", "a")) for _ in range(COUNTRIES)]
    city_names = [names.word(rng.choice((2, 3))) for _ in range(CITIES)]
    city_country = [rng.randrange(COUNTRIES) for _ in range(CITIES)]
    capitals = {}
    for city, country in enumerate(city_country):
        capitals.setdefault(country, city)
    people = [
        Person(
            f"person-{i:04d}",
            f"{names.word(2)} {names.word(2)}",
            rng.randint(1850, 1990),
            rng.randrange(CITIES),
            rng.choice(OCCUPATIONS),
            -1,
        )
        for i in range(PEOPLE)
    ]
    organisations = [
        Organisation(
            f"org-{i:04d}",
            f"{names.word(2)} {rng.choice(ORG_KINDS)}",
            rng.randint(1820, 2000),
            rng.randrange(CITIES),
            rng.randrange(PEOPLE),
            rng.choice(FIELDS),
        )
        for i in range(ORGANISATIONS)
    ]
    for person in people:
        person.employer = rng.randrange(ORGANISATIONS)

    corpus = []
    for i, country in enumerate(countries):
        capital = city_names[capitals[i]] if i in capitals else None
        text = (
            f"{country} is a country."
            + (f" Its capital is {capital}." if capital else "")
            + f" It is known for {rng.choice(TERRAIN)} and a population of {rng.randint(1, 90)} million."
        )
        corpus.append({"id": f"country-{i:03d}", "title": country, "text": text})
    for i, city in enumerate(city_names):
        country = countries[city_country[i]]
        role = "the capital" if capitals.get(city_country[i]) == i else "a city"
        corpus.append(
            {
                "id": f"city-{i:04d}",
                "title": city,
                "text": (
                    f"{city} is {role} of {country}. It lies on {rng.choice(TERRAIN)} and was chartered in "
                    f"{rng.randint(1200, 1900)}."
                ),
            }
        )
    for org in organisations:
        founder = people[org.founder]
        corpus.append(
            {
                "id": org.id,
                "title": org.name,
                "text": (
                    f"{org.name} is an organisation working in {org.field}, founded in {org.founded} by {founder.name}. "
                    f"Its headquarters are in {city_names[org.city]}."
                ),
            }
        )
    for person in people:
        corpus.append(
            {
                "id": person.id,
                "title": person.name,
                "text": (
                    f"{person.name} (born {person.born}) is a {person.occupation} born in {city_names[person.city]}. "
                    f"{person.name.split()[0]} works for {organisations[person.employer].name}."
                ),
            }
        )

    def bridge_2hop(n: int) -> dict:
        person = rng.choice(people)
        org = organisations[person.employer]
        return {
            "question": f"In which city are the headquarters of the organisation that {person.name} works for?",
            "answers": [city_names[org.city]],
            "hops": 2,
            "supporting_ids": [person.id, org.id],
        }

    def founder_2hop(n: int) -> dict:
        person = rng.choice(people)
        org = organisations[person.employer]
        return {
            "question": f"Who founded the organisation that {person.name} works for?",
            "answers": [people[org.founder].name],
            "hops": 2,
            "supporting_ids": [person.id, org.id],
        }

    def bridge_3hop(n: int) -> dict:
        org = rng.choice(organisations)
        founder = people[org.founder]
        return {
            "question": f"In which country was the founder of {org.name} born?",
            "answers": [countries[city_country[founder.city]]],
            "hops": 3,
            "supporting_ids": [org.id, founder.id, f"city-{founder.city:04d}"],
        }

    def compare_people(n: int) -> dict:
        first, second = rng.sample(people, 2)
        while first.born == second.born:
            first, second = rng.sample(people, 2)
        older = first if first.born < second.born else second
        return {
            "question": f"Who was born first, {first.name} or {second.name}?",
            "answers": [older.name],
            "hops": 2,
            "supporting_ids": [first.id, second.id],
        }

    def compare_orgs(n: int) -> dict:
        first, second = rng.sample(organisations, 2)
        while first.founded == second.founded:
            first, second = rng.sample(organisations, 2)
        older = first if first.founded < second.founded else second
        return {
            "question": f"Which was founded first, {first.name} or {second.name}?",
            "answers": [older.name],
            "hops": 2,
            "supporting_ids": [first.id, second.id],
        }

    makers = (bridge_2hop, founder_2hop, bridge_3hop, compare_people, compare_orgs)
    questions = []
    for n in range(QUESTIONS_PER_TYPE):
        for make in makers:
            questions.append({"id": f"q{len(questions):04d}", **make(n), "type": make.__name__})
    return corpus, questions


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA, help="the folder written (default: the task's data/)")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    corpus, questions = build()
    (out / CORPUS_FILE).write_text(jsonl(corpus), encoding="utf-8")
    (out / QUESTIONS_FILE).write_text(jsonl(questions), encoding="utf-8")
    print(f"{len(corpus)} passages, {len(questions)} questions -> {out}")


if __name__ == "__main__":
    main()
