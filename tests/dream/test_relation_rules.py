"""The word rules that tell an update from a new fact, with cosines from the real embedding model:
a role handed to someone else, a value moved with only one rare word in common, an order of
"what comes first" reversed, and a shared everyday word that must not link two facts."""
from __future__ import annotations

import pytest

from core.dream.judgment.relations import DUPLICATE, NEW, UPDATE, Candidate, Rarity, relate, stem

# Other bullets of a memory, so that rarity weights are those of a real page, not of two lines.
BACKGROUND = [
    "The team writes its design notes in the wiki", "Standup is at 09:30 on weekdays",
    "Prefers short answers with the code first", "The office is closed on public holidays",
    "Uses a standing desk in the afternoon", "The laptop is a 14-inch model with 32 GB of memory",
    "Reviews happen in pairs before a merge", "Coffee comes from the kiosk downstairs",
    "Backups are kept for 14 days", "The quarterly report is due in the first week of the quarter",
    "Lives in a flat on the third floor with a small balcony", "Cycles to work when it is dry",
    "Allergic to penicillin", "Her sister Ines lives in Porto", "Speaks Portuguese and English at home",
    "The cat is called Miso and eats twice a day", "Deploys go out on Tuesdays and Thursdays",
    "The VPN must be on before opening the admin panel", "Writes release notes in plain English",
    "Keeps a paper notebook for meeting notes", "The car goes in for a service every spring",
    "Dentist is Dr Okafor in the high street", "Prefers window seats on trains",
    "The build server runs Debian 12", "Pays the rent on the 1st of each month",
    "Likes jazz radio while cooking", "Invoices go out in euros", "The garden hose is in the shed",
    "Reads crime novels on holiday", "Team lunches are on Fridays",
]


@pytest.fixture(scope="module")
def cosine():
    """Cosine of two texts with the embedder a dream uses (all-MiniLM-L6-v2)."""
    from core.dream.judgment.similarity import Similarity
    from core.index.embedding import default_embedder

    return Similarity(default_embedder().embed_batch).score


def related(fact: str, bullet: str, cosine, pinned: bool = False):
    rarity = Rarity(BACKGROUND + [bullet, fact])
    return relate(fact, [Candidate("b1", bullet, cosine(fact, bullet), pinned)], rarity)


@pytest.mark.parametrize("forms", [("hive", "hives"), ("change", "changed", "changes"), ("go", "goes"),
                                   ("flip", "flipped"), ("box", "boxes"), ("study", "studies")])
def test_a_words_forms_share_one_stem(forms):
    assert len({stem(word) for word in forms}) == 1, [stem(word) for word in forms]


CASES = {
    # A role handed to someone else replaces the holder.
    "handed over": ("Marta Quist has handed the treasurer job to Oskar Lind, who signs the cheques now.",
                    "The club treasurer is Marta Quist; she signs the cheques", UPDATE),
    # A value changed, close in meaning, with one rare word in common.
    "one rare word": ("Podcast night changed to the second Friday of the month; more listeners that way.",
                      "Decision: the Orbit Radio podcast records on the last Tuesday of the month", UPDATE),
    "fewer left": ("Only one aquarium left; the second tank cracked and was thrown out.",
                   "Sam keeps two aquariums in the hallway and cleans them every 14 days", UPDATE),
    "first reversed": ("Ravi flipped on summaries: he wants the numbers first and then the story.",
                       "Wants the story first, numbers after", UPDATE),
    "same unit": ("Raised the simulation to 5000 draws for the price intervals; 500 was too noisy.",
                  "Price intervals use 500 simulation draws", UPDATE),
    # "kept", a new number and the word "new": still another subject.
    "everyday word": ("Session tokens on the login API are kept for 12 hours; after that a new login is needed.",
                      "Backups are kept for 14 days", NEW),
    # The same client, "only" as a cue and other numbers: days of the month are not dots per inch.
    "another unit": ("Lesson: Blue Heron's accounts team only pays on the 5th and the 20th, so invoice before.",
                     "Blue Heron wants the photos as TIFFs at 300 dpi", NEW),
    "rewording": ("Standup happens at 09:30 every weekday", "Standup is at 09:30 on weekdays", DUPLICATE),
}


@pytest.mark.parametrize("name", CASES)
def test_relation(name, cosine):
    fact, bullet, kind = CASES[name]
    relation = related(fact, bullet, cosine)
    assert relation.kind == kind, relation


def test_a_traded_noun_is_not_a_duplicate(cosine):
    relation = related("Rosa Quintero maintains the billing dashboard",
                       "Rosa Quintero maintains the billing exporter", cosine)
    assert relation.kind != DUPLICATE, relation


def test_the_same_attribute_of_two_named_things_is_two_facts(cosine):
    # The attribute's words ("API key alias") are in many lines; the project names tell them apart.
    page = [f"The API key alias for project {name} is {word}-{number}." for name, word, number in
            (("Kiwi", "amber", 4120), ("Lemon", "cinder", 4377), ("Mango", "falcon", 4519), ("Nectar", "onyx", 4823))]
    fact = "The API key alias for project Osprey is onyx-5415."
    rarity = Rarity(BACKGROUND + page + [fact])
    candidates = [Candidate(f"b{i}", text, cosine(fact, text)) for i, text in enumerate(page)]
    relation = relate(fact, sorted(candidates, key=lambda c: -c.cosine), rarity)
    assert relation.kind == NEW, relation


def test_a_change_cue_in_a_list_of_quoted_strings_is_a_mention_not_a_change():
    """'searches for "expired", "no longer open"' names words; it does not say anything is gone.
    One quotation is reported speech and still counts; a code span is a value."""
    from core.dream.judgment.word_relations import gone_words

    bullet = Candidate("b", "Use exact reads for the listings check", 0.7)
    mention = 'Listings check: reads 20KB of each page and searches for "expired", "closed", "no longer open"'
    assert gone_words(mention) == frozenset()
    assert relate(mention, [bullet], Rarity(BACKGROUND + [bullet.text, mention])).kind != UPDATE
    assert gone_words('过滤词：「已停售」、「不再供应」') == frozenset()
    assert stem("npm") in gone_words("We switched from `npm` to pnpm")
    assert stem("rotation") in gone_words("Daniel is no longer on the rotation")
