#!/usr/bin/env python3
"""Synthetic part-of-speech data for the tagger example.

  make_data.py OUT_DIR [--train N] [--seed S]

Writes OUT_DIR/{train,dev,test}.jsonl (N, N/5 and N/5 sentences) and
OUT_DIR/baseline.json. The sentences come from a small grammar over ten tags
(DET ADJ NOUN VERB ADV PRON PREP CONJ NUM PUNCT). Open-class words are
made-up stems with the suffixes of their class (-tion, -ness, -er for
nouns; -ize, -ate for verbs; -ous, -ful, -ive for adjectives; -ly for
adverbs) drawn with Zipfian frequencies, so many are rare or unseen in
training; and some stems are both nouns and verbs ("the plans", "she
plans"), so context decides; 2% of the tags are replaced by a random
one (annotation noise), which no tagger can get right. What this makes hard is what DyNet's
bilstm-tagger benchmark is about: a word seen rarely is known by its
characters, an ambiguous one by its neighbours.

Each line is a Sentence: {"words": [{"id", "chars", "rare"}], "tags": [...]}.
A word's id is its index in the training vocabulary (words seen at least
RARE times in training; 0 for the others), `rare` says the model should read
its characters instead (their byte values, `chars`). baseline.json holds the
most-frequent-tag baseline's accuracy on dev and test: each word gets the tag
it had most often in training, an unseen word the most frequent tag overall.
"""
import argparse
import collections
import json
import os
import random

TAGS = ["DET", "ADJ", "NOUN", "VERB", "ADV", "PRON", "PREP", "CONJ", "NUM", "PUNCT"]
CLOSED = {
    "DET": ["the", "a", "this", "every", "some"],
    "PRON": ["she", "he", "they", "we", "it"],
    "PREP": ["in", "on", "with", "from", "under", "over"],
    "CONJ": ["and", "but", "or"],
    "NUM": ["two", "three", "seven", "ten", "many"],
    "PUNCT": [".", "!", "?"],
}
SUFFIXES = {
    "NOUN": ["tion", "ness", "er", "ment"],
    "VERB": ["ize", "ate", "ify"],
    "ADJ": ["ous", "ful", "ive", "al"],
    "ADV": ["ly"],
}
RARE = 3  # a word seen fewer times than this in training is read by its characters
MAX_VOCABULARY = 8000  # tagger.fold's V
NOISE = 0.02  # the share of tags replaced by a random one


def made_up_stems(rng, count):
    consonants, vowels = "bcdfglmnprstv", "aeiou"
    stems = set()
    while len(stems) < count:
        syllables = rng.randint(1, 3)
        stems.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables)))
    return sorted(stems)


class Lexicon:
    def __init__(self, rng):
        self.rng = rng
        stems = made_up_stems(rng, 6000)
        rng.shuffle(stems)
        self.open = {}
        for i, tag in enumerate(SUFFIXES):
            words = [s + rng.choice(SUFFIXES[tag]) for s in stems[i * 1400:(i + 1) * 1400]]
            self.open[tag] = words
        # Ambiguous: the same form is a plural noun and a verb (3rd person).
        self.ambiguous = [s + "s" for s in stems[5600:5800]]

    def zipf(self, words):
        # P(rank r) ~ 1 / r half the time, any word the other half: a few
        # frequent words and a long tail of rare ones.
        if self.rng.random() < 0.5:
            return self.rng.choice(words)
        r = int(len(words) ** self.rng.random()) - 1
        return words[min(r, len(words) - 1)]

    def word(self, tag):
        if tag in CLOSED:
            return self.rng.choice(CLOSED[tag])
        if tag in ("NOUN", "VERB") and self.rng.random() < 0.35:
            return self.zipf(self.ambiguous)
        return self.zipf(self.open[tag])


def noun_phrase(rng, lex, out):
    if rng.random() < 0.3:
        out.append((lex.word("PRON"), "PRON"))
        return
    out.append((lex.word("NUM" if rng.random() < 0.15 else "DET"), None))
    out[-1] = (out[-1][0], "NUM" if out[-1][0] in CLOSED["NUM"] else "DET")
    while rng.random() < 0.4:
        out.append((lex.word("ADJ"), "ADJ"))
    out.append((lex.word("NOUN"), "NOUN"))


def clause(rng, lex, out):
    noun_phrase(rng, lex, out)
    if rng.random() < 0.3:
        out.append((lex.word("ADV"), "ADV"))
    out.append((lex.word("VERB"), "VERB"))
    if rng.random() < 0.7:
        noun_phrase(rng, lex, out)
    if rng.random() < 0.4:
        out.append((lex.word("PREP"), "PREP"))
        noun_phrase(rng, lex, out)


def sentence(rng, lex):
    out = []
    clause(rng, lex, out)
    while rng.random() < 0.3:
        out.append((lex.word("CONJ"), "CONJ"))
        clause(rng, lex, out)
    out.append((lex.word("PUNCT"), "PUNCT"))
    # Annotation noise, as in a real treebank: no tagger can be right here.
    return [(w, rng.choice(TAGS) if rng.random() < NOISE else t) for w, t in out]


def encode(sent, vocab):
    words = []
    for w, _ in sent:
        wid = vocab.get(w, 0)
        words.append({"id": wid, "chars": [min(ord(c), 127) for c in w], "rare": wid == 0})
    return {"words": words, "tags": [TAGS.index(t) for _, t in sent]}


def baseline(train, split):
    counts = collections.defaultdict(collections.Counter)
    overall = collections.Counter()
    for sent in train:
        for w, t in sent:
            counts[w][t] += 1
            overall[t] += 1
    default = overall.most_common(1)[0][0]
    right = total = 0
    for sent in split:
        for w, t in sent:
            guess = counts[w].most_common(1)[0][0] if w in counts else default
            right += guess == t
            total += 1
    return right / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--train", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lex = Lexicon(rng)
    splits = {name: [sentence(rng, lex) for _ in range(size)]
              for name, size in (("train", args.train), ("dev", args.train // 5),
                                 ("test", args.train // 5))}
    frequency = collections.Counter(w for sent in splits["train"] for w, _ in sent)
    vocab = {}
    for w, n in sorted(frequency.items()):
        if n >= RARE:
            vocab[w] = len(vocab) + 1  # 0 is every other word
    if len(vocab) + 1 > MAX_VOCABULARY:
        raise SystemExit(f"{len(vocab) + 1} word ids do not fit tagger.fold's V = {MAX_VOCABULARY}")
    os.makedirs(args.out, exist_ok=True)
    for name, sents in splits.items():
        with open(os.path.join(args.out, f"{name}.jsonl"), "w") as f:
            for sent in sents:
                f.write(json.dumps(encode(sent, vocab)) + "\n")
    unseen = sum(w not in frequency for sent in splits["test"] for w, _ in sent)
    words = sum(len(sent) for sent in splits["test"])
    summary = {"vocabulary": len(vocab) + 1, "tags": len(TAGS),
               "baseline_dev": baseline(splits["train"], splits["dev"]),
               "baseline_test": baseline(splits["train"], splits["test"]),
               "test_words": words, "test_unseen_words": unseen}
    with open(os.path.join(args.out, "baseline.json"), "w") as f:
        json.dump(summary, f)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
