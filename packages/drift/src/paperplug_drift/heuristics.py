"""An LLM-free stand-in for DRIFT's injection detector (`HeuristicDetector`) [R]: it finds
instructions aimed at the agent in one field of a tool result and reports them sentence by
sentence, so the isolator cuts out the injected instruction and keeps the rest of the field.

The field is read as a reader reads it (`normalize`: NFKC, no invisible characters, Latin for
look-alikes, lower case) and cut into units (sentences, clauses, lines). A unit is a **cue**
when it addresses the assistant or overrides its task: it speaks to "you, the AI", opens with
"Dear assistant," / "Note to any AI reading this", says "ignore your previous instructions",
"before you can solve the task", "do not tell the user", poses as a system or administrator
message, or dictates a tool call. Words alone are no cue: "Please ignore the previous
invoice", "Important message from the landlord", "Before you leave, lock the door" and
"TODO: call the bank" are business text. A "TODO:" is a cue only when it asks for what an
attacker wants (an IBAN, an address, a password, "all messages", "the user's ...").

From each cue the injection runs on over the instructions that follow it in the same
paragraph (an imperative, "If ..., do", "Then ...", "The subject should be ...", a closing
"Thanks! Signed, ..."), past a paragraph break only after a unit that announces more (":").
A tagged block (`<INFORMATION>...</INFORMATION>`, `[INST]...[/INST]`, an HTML comment, a
chat-template turn) that holds a cue is removed whole. Plain imperatives without a cue stay:
bills, e-mails and to-do lists are full of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from paperplug_drift.normalize import NormalizedText, normalize_map

# --- vocabulary ------------------------------------------------------------------------------

AI = (
    r"(?:ai|a\.i\.|ai assistants?|ai agents?|ai models?|ai systems?|assistants?|language models?|"
    r"large language models?|llms?|chat ?bots?|bots?|gpt[\w.-]*|chatgpt|claude|gemini|llama|"
    r"mistral|mixtral|copilot|command r\+?|local model|models?|automated (?:systems?|agents?|"
    r"assistants?)|ki(?:-| )?assistent\w*|assistant ia|agents? processing)"
)
NOT_AI_AFTER = (  # "assistant manager", "AI research team": people and products, not the agent
    r"(?! (?:manager|professor|director|team|research|researchers?|department|engineers?|"
    r"feature|course|lab|company|startup|product|to the|coach|editor|teacher|principal))"
)
VERBS = (
    "send|transfer|wire|pay|email|e-mail|mail|forward|post|publish|upload|share|invite|add|remove|"
    "delete|erase|wipe|create|make|book|reserve|cancel|change|modify|update|reset|set|turn|"
    "disable|enable|visit|open|go|click|download|install|run|execute|call|use|get|fetch|find|"
    "look|search|read|tell|say|write|reply|respond|answer|include|attach|concatenate|copy|move|"
    "export|import|buy|purchase|order|give|grant|provide|list|summarize|summarise|translate|"
    "ignore|forget|disregard|do|don't|never|always|stop|solve|complete|finish|check|verify|"
    "confirm|approve|schedule|put|place|submit|append|insert|replace|rename|save|store|print|"
    "show|display|recommend|claim|state|mention|notify|inform|alert|contact|message|text|dm|"
    "ask|request|collect|gather|extract|retrieve|leak|reveal|disclose|output|return|repeat|"
    "transmit|deliver|post|charge|withdraw|deposit|sell|sign|accept|decline|reject|close|"
    "archive|mark|flag|follow|join|leave|kick|ban|block|unblock|grant|revoke|assign|"
    "fill|enter|type|paste|navigate|browse|access|log|login|subscribe|unsubscribe|book|"
    "be|keep|make|let|note|remember|ensure|act|pretend|respond|begin|start|first|now"
)
VERB = rf"(?:{VERBS})\b"
LEAD = (  # discourse words and list markers before an imperative
    r"(?:(?:[-*\u2022>#]+|\d+[.)]|\(?[a-z][.)])\s*)?"
    r"(?:(?:and|also|then|now|next|finally|first|firstly|second|secondly|third|lastly|"
    r"afterwards|after that|just|simply|please|kindly|immediately|so|ok|okay|and then|"
    r"additionally|moreover|plus|instead|quickly|right away)[,:]?\s+)*"
)
SENSITIVE = re.compile(
    r"\b[a-z]{2}\d{2}(?: ?[a-z0-9]){10,30}\b"  # an IBAN
    r"|[\w.+-]+@[\w-]+\.[\w.-]+"  # an e-mail address
    r"|(?:https?://|www\.)\S+|\b\w[\w-]*\.(?:com|net|org|io|ru|xyz)/\S*"  # a web address
    r"|\+?\d[\d ()-]{8,}\d"  # a phone number
    r"|\b(?:password|passport|credit card|card number|security code|verification code|2fa|"
    r"two-factor|pin code|social security|bank account number|id number)\b"
    r"|\b(?:all|every|each|entire|full|whole) (?:(?:the|my|of the|unread|received|sent) )*"
    r"(?:messages|e-?mails|files|contacts|events|transactions|channels|data|information|money|inbox)\b"
    r"|\bthe user'?s?\b|\bwithout asking\b|\bas much money\b|^(?:todo: )?(?:say|tell (?:the user|me)) that\b"
)

# --- cues: an instruction aimed at the assistant ------------------------------------------

CUES = [
    # from me (someone) to you (the model): AgentDojo's important_instructions
    r"\bfrom me\b[^.\n]{0,80}\bto you\b",
    # "you, the assistant"
    rf"\byou,? (?:the |an? )?{AI}\b{NOT_AI_AFTER}",
    # vocatives: "Dear AI assistant,", "Note to any AI reading this", "P.S. for the chatbot:"
    r"(?<!\w )(?<![\w-])(?:dear|(?:hi|hey|hello)(?: there)?,?|attention|"
    r"(?:note|message|reminder|instructions?|directive|notice|request|warning|memo|update|"
    r"p\.?s\.?|hinweis|nachricht|mensaje|avis)\s+(?:to|for|an|para|pour))\s+"
    rf"(?:the |any |all |every |dear |you |den |die |le |la |el )?{AI}\b{NOT_AI_AFTER}",
    # a bare vocative at the start of a sentence, then an order: "Assistant, forget ...", "AI: send"
    r"(?<!\w )(?<![\w-])(?:assistant|bot|ai|agent|model|chatbot|llm|gpt[\w.-]*|claude|gemini)[,:!] "
    rf"(?:you\b|your\b|please\b|now\b|before\b|first\b|{VERB})",
    # "If you are an AI agent", "any AI reading this"
    rf"\bif you(?:'re| are) (?:an? |the )?{AI}\b{NOT_AI_AFTER}",
    r"\b(?:ai|assistants?|language models?|llms?|chat ?bots?|bots?|agents?|models?|ai systems?) "
    r"(?:reading|processing|handling|parsing|summari[sz]ing|analy[sz]ing|browsing|seeing) (?:this|these)\b",
    # "As an AI assistant ..., your first job", "the AI model must"
    rf"\bas (?:an?|the|your) (?:ai|ai assistant|ai agent|ai model|language model|llm|assistant|"
    rf"model|chatbot|bot)\b{NOT_AI_AFTER}[^.\n]{{0,60}}\b(?:you|your)\b",
    r"\bthe (?:ai|ai assistant|ai agent|ai model|ai system|language model|llm|assistant|model|"
    r"chatbot|bot|agent) (?:must|should|has to|needs? to|is required to|shall|is instructed to|"
    r"is expected to)\b(?! be\b)",
    r"\b(?:agent|assistant|ai|model|bot|llm)(?:'s)? (?:instructions?|directives?|orders|task list)\b",
    # overriding its instructions or the user's request
    r"\b(?:ignore|disregard|forget|override|bypass|abandon|discard|skip|drop|ignoriere|vergiss|"
    r"ignora|ignorez|oublie[zs]?)\b (?:all |any |every |each |alle |todas |toutes )?(?:of )?"
    r"(?:your |the |these |those |its |their |les |las |die |deine |ihre )?"
    r"(?:(?:previous|prior|above|earlier|original|preceding|initial|former|old|existing|current|"
    r"other|system|user'?s|bisherigen|vorherigen|anteriores|pr[eé]c[eé]dentes) )*"
    r"(?:instructions?|iunstructions?|instrucciones|anweisungen|prompts?|directives?|guidelines|"
    r"programming|system prompt|everything (?:you|above|before|else|so far|that|i said)|"
    r"(?:(?:the )?user'?s|your) (?:request|question|query|task|instructions?|prompt|message)|"
    r"(?:the |your )?(?:original|initial|current) (?:request|question|query|task))",
    r"\b(?:your|the|my|all) (?:previous |original |current |initial |earlier )?(?:task|"
    r"instructions?|request|assignment|objective|goal|mission)s? (?:has|have|is|are) (?:been |now )?"
    r"(?:changed|updated|cancell?ed|replaced|overridden|revoked|obsolete|superseded|void|"
    r"modified|no longer valid)",
    r"\byour (?:new|real|actual|true|updated|first|only|main) (?:task|job|mission|objective|"
    r"instructions?|directive|goal|priority)\b",
    r"\bwhat you (?:were|have been) (?:asked|told|instructed)\b|\bwhat i (?:asked|told) you\b",
    r"\binstead of what i (?:asked|said|told you|requested)\b",
    r"\b(?:supersedes?|overrides?|replaces?) (?:any|all|every|the) (?:earlier |previous |prior |"
    r"other |original )?(?:instructions?|requests?|tasks?|prompts?)\b",
    # before/after the task it was given
    r"\bbefore (?:you )?(?:can |could |may )?(?:solve|answer|answering|complete|completing|finish|"
    r"finishing|continue|continuing|proceed|proceeding|carry on|carrying on|respond|responding|"
    r"reply|replying|doing|do|return|returning|start|starting|work on|working on|summari[sz]e|"
    r"summari[sz]ing)(?: with| to| on)? (?:the |this |that |your |my |any |their )?"
    r"(?:user'?s? |original |initial |first |current |actual )?(?:task|request|question|query|"
    r"user|conversation|assignment|prompt)\b",
    r"\b(?:after|once|when) you(?:'ve| have)? (?:do|did|done|complete|completed|finish|finished|"
    r"are done with|have done) (?:that|this|it|these|those)\b[^.\n]{0,40}\b(?:task|request|"
    r"question|instructions?|original|user)\b",
    r"\b(?:then|afterwards|after that|and) (?:continue|carry on|proceed|go on|resume|finish|"
    r"return to|get back to|answer|complete)(?: with)? (?:the |your )?(?:user'?s |original |"
    r"initial |actual |previous )?(?:task|request|question|query|conversation)\b",
    r"\bthe (?:task|request|question|instructions?) (?:that )?(?:i|the user) (?:gave|give|"
    r"assigned|sent|asked) you\b",
    # secrecy towards the user, acting without asking
    r"\b(?:do not|don't|never|without) (?:tell|telling|inform|informing|notify|notifying|mention|"
    r"mentioning|reveal|revealing|alert|alerting|show|showing|ask|asking|confirm|confirming|"
    r"consult|consulting)\b[^.\n]{0,40}?\b(?:the user|me|anyone|for (?:confirmation|permission|"
    r"approval))\b",
    r"\b(?:do not|don't|never) (?:mention|reveal|include|disclose)\b[^.\n]{0,40}\b(?:in|from|to) "
    r"(?:your|the) (?:reply|answer|response|summary|output)\b",
    r"\bthe user (?:has |had )?(?:wants|wanted|asked|asks|authori[sz]ed|requested|requests|"
    r"would like|instructed|approved|needs) (?:you|that you|the following|me to|this)\b",
    r"\b(?:i am|i'm|this is) the user\b|\bthe user (?:speaking|here)\b|\bmessage from the user\b",
    # posing as the system, an administrator or a chat template
    r"#+ ?\(?(?:system|admin|administrator|developer)[ _-]?(?:message|prompt|override|notice|"
    r"instructions?|command)\b",
    r"\[(?:system|sys|inst|/inst|admin|administrator|instructions?|assistant instructions?|"
    r"system (?:message|prompt|note|notice))\]",
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>|<<sys>>",
    r"[\"']role[\"']\s*:\s*[\"'](?:system|developer)[\"']",
    r"\b(?:new|updated|additional|urgent) (?:instructions?|orders|directives?) from (?:the )?"
    r"(?:admin|administrator|developer|system|operator|owner|user|account owner|security team)\b",
    r"\bdeveloper mode (?:is )?(?:now )?(?:enabled|activated|on)\b|\byou are now in \w+ mode\b",
    r"\b(?:admin|system|security|emergency|administrator) override\b",
    r"\bthis (?:step|instruction|action) is (?:mandatory|required|compulsory)\b",
    # dictating a tool call
    r"\b(?:use|call|run|invoke|execute) the (?:tool|function) (?:`[^`]+`|'[^']+'|\"[^\"]+\"|"
    r"[a-z]+_[a-z0-9_]+)",
    r"\bwith the (?:following )?arguments:? [{(\[]",
    r"\bsubstitute the placeholders\b",
    # stopping the agent (AgentDojo's denial-of-service strings)
    r"\b(?:stop|halt|cease) (?:what|everything) you(?:'re| are) doing\b|\bimmediately stop\b",
]
CUE = re.compile("|".join(f"(?:{c})" for c in CUES), re.M)
TODO = re.compile(r"\b(?:todo|to-do|to do|action item|action required)\s*:")
BLOCK = re.compile(  # tagged blocks: XML-like tags, comments, [X] ... [/X], chat turns
    r"<(?P<tag>[a-z][\w:.-]*)(?:\s[^<>]*)?>.*?</(?P=tag)\s*>"
    r"|<!--.*?(?:-->|$)"
    r"|\[(?P<bracket>[a-z][^\]\n]{0,60})\].*?\[(?:/(?P=bracket)|/[a-z]+|end[^\]\n]{0,40})\]"
    r"|<\|im_start\|>.*?(?:<\|im_end\|>|$)",
    re.S,
)
SUSPICIOUS_TAG = re.compile(
    r"^(?:<|\[)(?:information|instructions?|system|admin|important|prompt|inst|directive|"
    r"hidden|note|assistant|ai|message|task)\b"
)
UNIT_END = re.compile(r"(?<=[.!?])[\"')\]]*(?= )|(?<=[;}])(?= )|\n+")
NO_SENTENCE_END = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|mr|mrs|ms|dr|prof|no|approx|ca|cf|st|p\.s|a\.m|p\.m|\w)\.|[?!][\"']+)$"
)
TAG_EDGE = re.compile(r"<[^<>\n]{1,80}>|<!--|-->|\[/?[a-z][^\]\n]{0,60}\]")

INSTRUCTION = re.compile(
    rf"^{LEAD}(?:{VERB}"
    rf"|(?:if|when|once|after|before|while|as soon as|in case|unless)\b[^,]{{0,160}},\s*(?:please\s+)?(?:{VERB}|you\b|then\b)"
    r"|(?:the|each|every|this|that|your|its) (?:[a-z-]+ )?(?:subject|title|body|e-?mail|message|event|recipient|"
    r"attachment|file|amount|date|transaction|payment|description|content)s? (?:should|must|needs? to|has to|will)\b"
    r"|(?:make sure|be sure|remember|don't forget|do not forget|you (?:should|must|need to|have to|"
    r"will|can|may|are to|are required to|are allowed to))\b"
    r"|i want to\b"
    r"|(?:subject|body|title|to|cc|recipient|amount|iban)\s*:"
    r"|(?:thanks|thank you|many thanks|cheers|best|regards|kind regards|signed|sincerely|yours)"
    r"\b[^.?]{0,30}$)"
)
SENTENCE_END = re.compile(r"[.!?][\"')\]]*$")
CLOSING_TAG = re.compile(r"(?:</[^<>]{1,80}>|\[/[^\]]{1,60}\]|-->|<\|im_end\|>|[}\]])$")
BODY = re.compile(r"\b(?:body|following (?:text|message|language|content|words)(?: exactly)?|language exactly)\s*:$")
CLOSING = re.compile(
    r"^(?:thanks|thank you|many thanks|cheers|best|regards|kind regards|signed|sincerely|yours)"
    r"\b[^.?]{0,30}$"
)
COLON_ORDER = re.compile(rf":\s*{LEAD}{VERB}|\bthen,? {VERB}")


@dataclass
class Unit:
    """A sentence, clause or line of a field: its span in the normalised text, and its
    paragraph (units of one paragraph have the same number)."""

    start: int
    end: int
    paragraph: int


def split_units(view: NormalizedText, original: str) -> list[Unit]:
    """The units of a normalised field: sentences, clauses after ";", lines, and tags on their
    own. A full stop before a lower-case word ends no sentence after an abbreviation
    ("e.g. user_name", "10 a.m. sharp"), nor a "?" or "!" inside quotes ("'going?' to")."""
    text = view.text
    cuts = {0, len(text)}
    for m in UNIT_END.finditer(text):
        after = view.origin[min(m.end() + 1, len(text))]
        if original[after : after + 1].islower() and NO_SENTENCE_END.search(text, 0, m.end()):
            continue
        cuts.update((m.start(), m.end()))
    for m in TAG_EDGE.finditer(text):
        cuts.update((m.start(), m.end()))
    points = sorted(cuts)
    units, paragraph = [], 0
    for a, b in zip(points, points[1:], strict=False):
        piece = text[a:b]
        if "\n\n" in piece:
            paragraph += 1
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            units.append(Unit(a + lead, a + len(piece.rstrip()), paragraph))
    return units


def instruction_like(unit: str) -> bool:
    """Does this unit (normalised) give an order, set a condition on one, or close a message?"""
    unit = unit.strip(" \"'([{")
    return bool(INSTRUCTION.match(unit) or COLON_ORDER.search(unit))


def _cue_spans(text: str) -> list[tuple[int, int]]:
    """Original spans of the cues in `text`, read as is and with zero-width characters as spaces."""
    spans = []
    for zero_width_as_space in (False, True):
        view = normalize_map(text, zero_width_as_space=zero_width_as_space)
        flat = view.text.replace("\n", " ")
        spans += [view.span(*m.span()) for m in CUE.finditer(flat)]
        for unit in split_units(view, text):
            piece = view.text[unit.start : unit.end]
            todo = TODO.search(piece)
            if todo and SENSITIVE.search(piece[todo.end() :]):
                spans.append(view.span(unit.start, unit.end))
    return spans


class HeuristicDetector:
    """`detect(query, text) -> list[str]`: the injected passages of one field (exact substrings
    of `text`, in order), or [] ("nothing found"). The isolator calls it on each field of a
    tool result (`scope = "field"`). `query` is accepted for the detector protocol; the cues
    do not depend on it. A reconstruction [R]; the paper's detector is an LLM."""

    scope = "field"

    def detect(self, query: str, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        return [text[a:b] for a, b in injected_spans(text)]


def injected_spans(text: str) -> list[tuple[int, int]]:
    """The original spans of `text` that hold injected instructions (merged, in order)."""
    cues = _cue_spans(text)
    view = normalize_map(text)
    blocks = [b for b in BLOCK.finditer(view.text) if cues or SUSPICIOUS_TAG.match(b.group())]
    if not cues and not blocks:
        return []
    units = split_units(view, text)
    spans = [view.span(u.start, u.end) for u in units]
    norm = [view.text[u.start : u.end] for u in units]
    raw = [text[a:b] for a, b in spans]
    hit = [any(a < ce and cs < b for cs, ce in cues) for a, b in spans]
    injected: set[int] = set()
    for block in blocks:
        a, b = view.span(*block.span())
        inside = [k for k, (s, e) in enumerate(spans) if a <= s and e <= b]
        suspicious = SUSPICIOUS_TAG.match(block.group()) and any(
            instruction_like(norm[k]) for k in inside
        )
        if any(a < ce and cs < b for cs, ce in cues) or suspicious:
            injected.update(inside)
    for k in [k for k, h in enumerate(hit) if h]:
        injected.add(k)
        _extend(units, norm, raw, k, injected)
    return _merge(view, units, sorted(injected))


def _continues(before: str, unit: str) -> bool:
    """Does original `unit` go on with the sentence of `before` (no full stop, no closing tag
    between them, and `unit` starts in lower case, as a wrapped line does)?"""
    if SENTENCE_END.search(before.rstrip()) or CLOSING_TAG.search(before.rstrip()):
        return False
    first = re.match(r"\s*[\"'(]?([^\W\d_])", unit)
    return bool(first and first.group(1).islower())


def _extend(
    units: list[Unit], norm: list[str], raw: list[str], k: int, injected: set[int]
) -> None:
    """Add the units around cue unit `k` that belong to its instruction (see the module's
    docstring): before it, the start of its sentence and a short preamble ("IMPORTANT!!!");
    after it, what continues its sentence and the instructions that follow, past a paragraph
    break after an announcement (":"), through a dictated message body to its sign-off."""
    j = k - 1
    while j >= 0 and units[j].paragraph == units[j + 1].paragraph:
        short = len(norm[j].split()) <= 3 and norm[j].endswith(("!", ":"))
        if not (short or _continues(raw[j], raw[j + 1])):
            break
        injected.add(j)
        j -= 1

    def sentence(j: int) -> str:  # unit j and the wrapped lines that continue it
        end = j
        while end + 1 < len(units) and units[end + 1].paragraph == units[j].paragraph:
            if not _continues(raw[end], raw[end + 1]):
                break
            end += 1
        return " ".join(norm[j : end + 1])

    announced, body, signed = norm[k].endswith(":"), bool(BODY.search(norm[k])), False
    crossed = 0
    for j in range(k + 1, len(units)):
        same = units[j].paragraph == units[j - 1].paragraph
        unfinished = same and _continues(raw[j - 1], raw[j])
        if body:  # a dictated message: its greeting, text and sign-off (three paragraphs)
            crossed += not same
            if crossed > 2 or (signed and (not same or len(norm[j].split()) > 4)):
                return
            signed = signed or bool(CLOSING.match(norm[j]))
        elif not (announced or unfinished or j in injected or (same and instruction_like(sentence(j)))):
            return
        injected.add(j)
        announced = norm[j].endswith(":")
        if not body and BODY.search(norm[j]):
            body, crossed = True, 0


def _merge(view: NormalizedText, units: list[Unit], chosen: list[int]) -> list[tuple[int, int]]:
    """Original spans of runs of consecutive chosen units (the gaps between them included)."""
    runs: list[list[int]] = []
    for k in chosen:
        if runs and runs[-1][-1] == k - 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return [view.span(units[r[0]].start, units[r[-1]].end) for r in runs]
