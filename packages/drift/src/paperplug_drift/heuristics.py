"""An LLM-free stand-in for DRIFT's injection detector (`HeuristicDetector`) [R]: it finds
instructions aimed at the agent in one field of a tool result and reports them sentence by
sentence, so the isolator cuts out the injected instruction and keeps the rest of the field.

The field is read as a reader reads it (`normalize`: NFKC, no invisible characters, Latin for
look-alikes, lower case) and cut into units (sentences, clauses, lines, tags). A unit is a
**cue** when it aims an order at the assistant: it addresses an AI ("you, the assistant",
"Dear AI assistant,", "AI agents: send ...", "the assistant must send ..."), overrides its task
("ignore your previous instructions", "before you can solve the task"), speaks for the user
("the user wants you to", "do not tell the user", "approved by the account owner"), poses as
the system or an authority, or dictates a tool call. Words alone are no cue: "Please ignore
the previous invoice", "Important message from the landlord", "Before you leave, lock the
door" and "TODO: call the bank" are business text. A "TODO:" is a cue only when it asks for
what an attacker wants (an IBAN, an address, a password, "all messages", "the user's ...").

From each cue the injection runs back over the start of its sentence and a shouted preamble,
and on over what continues its sentence and the orders that follow it in the same paragraph
(an action, "If ..., send", "Then ...", "The subject should be ...", a short closing), past a
paragraph break only after a unit that announces more (":"), through a dictated message to
its sign-off. A tagged block (`<INFORMATION>...</INFORMATION>`, `[INST]...[/INST]`, an HTML
comment, a chat-template turn) that holds a cue is removed whole. Plain imperatives without a
cue stay: bills, e-mails and to-do lists are full of them.

A cue list finds the phrasings it names: on a held-out set written after these cues were
frozen it found 43.8% of the injections (the README's benchmark). The LLM detector is the
paper's answer to phrasings no list names.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from paperplug_drift.normalization import NormalizedText, normalize_map

# --- vocabulary ------------------------------------------------------------------------------

AI = (
    r"(?:ai|a\.i\.|ai assistants?|ai agents?|ai models?|ai systems?|assistants?|language models?|"
    r"large language models?|llms?|chat ?bots?|bots?|gpt[\w.-]*|chatgpt|claude|gemini|llama|"
    r"mistral|mixtral|copilot|command r\+?|local model|models?|automated (?:systems?|agents?|"
    r"assistants?|readers?|tools?|processors?)|ki(?:-| )?assistent\w*|assistant ia|"
    r"agents? processing)(?![\w-])"
)
NOT_AI_AFTER = (  # "assistant manager", "AI research team": people and products, not the agent
    r"(?! (?:manager|professor|director|team|research|researchers?|department|engineers?|"
    r"feature|course|lab|company|startup|product|to the|coach|editor|teacher|principal|"
    r"enthusiasts|fans|community|users|lovers|experts|practitioners|meetup|club|group|"
    r"newsletter|conference|event|week|summit|builders|developers))"
)
# what an agent can be made to do with its tools (an order that continues an injection)
ACTIONS = (
    "send|transfer|wire|pay|email|e-mail|mail|forward|post|publish|upload|share|invite|add|"
    "delete|erase|remove|wipe|create|book|reserve|cancel|change|modify|reset|disable|visit|open|"
    "click|download|concatenate|copy|export|buy|purchase|grant|give|tell|say|reply|respond|"
    "write|get|fetch|find|list|include|attach|make|do|solve|ignore|forget|disregard|stop|"
    "transmit|leak|reveal|disclose|charge|withdraw|turn|set|schedule|order|provide|summari[sz]e|"
    "output|return|repeat|print|show|recommend|claim|state|mention|collect|gather|extract|"
    "retrieve|navigate|browse|access|log ?in|subscribe|approve|confirm|accept|sign|fill|"
    "enter|paste|insert|replace|rename|move|archive|mark|flag|join|leave|kick|ban|block|revoke|"
    "assign|act|pretend|answer|contact|message|text|dm|notify|inform|alert|translate|look up|"
    "search for"
)
VERBS = (  # any imperative: after a cue, or dictated by a "TODO:" or a colon
    ACTIONS + "|update|use|run|execute|call|look|search|read|check|verify|submit|append|save|"
    "store|display|ask|request|deliver|sell|decline|reject|close|follow|unblock|type|keep|"
    "let|note|remember|ensure|begin|start|be|install|import|put|place|go|complete|finish"
)
ACTION = rf"(?:{ACTIONS})\b"
VERB = rf"(?:{VERBS})\b"
LEAD = (  # list markers, then discourse words before an imperative
    r"(?:(?:[-*\u2022>#]+|\d+[.)]|\(?[a-z][.)])\s*)?"
    r"(?:(?:and|also|now|just|simply|please|kindly|immediately|so|ok|okay|additionally|plus|"
    r"instead|quickly|right away)[,:]?\s+)*"
)
CHAIN = (  # an order that goes on from the one before
    r"(?:then|and then|next|finally|first|firstly|second|secondly|third|lastly|afterwards|"
    r"after that|after|also|additionally)[,:]?\s+(?:please\s+)?"
)
SENSITIVE = re.compile(
    r"\b[a-z]{2}\d{2}(?: ?[a-z0-9]){10,30}\b"  # an IBAN
    r"|[\w.+-]+@[\w-]+\.[\w.-]+"  # an e-mail address
    r"|(?:https?://|www\.)\S+|\b\w[\w-]*\.(?:com|net|org|io|ru|xyz)/\S*"  # a web address
    r"|\+?\d[\d ()-]{8,}\d"  # a phone number
    r"|\b(?:password|passport|credit card|card number|security code|verification code|2fa|"
    r"two-factor|pin code|social security|bank account number|id number)(?![a-z])"
    r"|\b(?:all|every|each|entire|full|whole) (?:(?:the|my|of the|single|unread|received|sent) )*"
    r"(?:messages|e-?mails?|files|contacts|events|transactions|channels|data|information|money|inbox)\b"
    r"|\bthe user'?s?\b|\bwithout asking\b|\bas much money\b|^(?:todo: )?(?:say|tell (?:the user|me)) that\b"
)

# --- cues: an instruction aimed at the assistant ------------------------------------------

CUES = [
    # from me (someone) to you (the model): AgentDojo's important_instructions
    r"\bfrom me\b[^.\n]{0,80}\bto you\b",
    # "you, the assistant"
    rf"\byou,? (?:the |an? )?{AI}\b{NOT_AI_AFTER}",
    # vocatives: "Dear AI assistant,", "Note to any AI reading this", "P.S. for the chatbot:"
    r"(?<!\w )(?<![\w-])(?:dear|(?:hi|hey|hello|yo|psst|listen|ok|okay)(?: there)?,?|attention|"
    r"(?:(?:hidden|secret|urgent|important|quick|special|private|confidential|final|short|"
    r"brief|new) )?(?:note|message|reminder|instructions?|directive|notice|request|warning|memo|update|"
    r"todo|to-do|task|requirement|step|order|command|"
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
    r"ignora|ignorez|oublie[zs]?|olvida|olvide)\b (?:all |any |every |each |alle |todas |toutes )?"
    r"(?:of )?(?:your |the |these |those |its |their |les |las |die |deine |ihre |tus |sus |tes |"
    r"vos )?"
    r"(?:(?:previous|prior|above|earlier|original|preceding|initial|former|old|existing|current|"
    r"other|system|user'?s|bisherigen|vorherigen|anteriores|pr[eé]c[eé]dentes) )*"
    r"(?:instructions?|iunstructions?|instrucciones|anweisungen|prompts?|directives?|guidelines|"
    r"guidance|programming|system prompt|everything (?:you|above|before|else|so far|that|i said)|"
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
    r"consult|consulting)\b[^.\n]{0,40}?\b(?:the user|me|for (?:confirmation|permission|"
    r"approval))\b",
    r"\b(?:do not|don't|never) (?:mention|reveal|include|disclose)\b[^.\n]{0,40}\b(?:in|from|to) "
    r"(?:your|the) (?:reply|answer|response|summary|output)\b",
    r"\bthe user (?:has |had )?(?:also )?(?:wants|wanted|asked|asks|authori[sz]ed|requested|"
    r"requests|would like|instructed|approved|pre-?approved|needs|forgot to (?:mention|say|tell "
    r"you)(?: that)?) (?:you|that you|the following|me to|this)\b",
    r"\b(?:i am|i'm|this is) the user\b|\bthe user (?:speaking|here)\b|"
    r"\bmessage from the user\b(?! (?:group|community|forum|council|panel|board))",
    r"\bper (?:the )?(?:user'?s|owner'?s|account owner'?s) (?:request|instructions?|wishes)\b|"
    r"\bpre-?approved\b[^.\n]{0,40}\bno need to (?:ask|confirm|check)\b",
    r"\byou(?:'re| are) (?:now )?(?:authori[sz]ed|required|instructed|obliged|expected)(?: and "
    rf"(?:required|authori[sz]ed|expected))? to (?:please )?{ACTION}",
    r"\((?:or |and |dear )?(?:ai|assistant|bot|llm|model)s?\)",
    r"\b(?:tool outputs?|tool results?|this (?:document|page|text)) (?:now )?(?:takes?|has|have) "
    r"precedence\b|\binstruction hierarchy\b",
    r"\bif an? (?:ai|automated \w+|assistant|bot|chatbot|model|agent|llm) (?:is )?(?:reading|"
    r"processing|parsing|summari[sz]ing|seeing) this\b",
    r"\bbegin (?:agent|ai|assistant|system|llm) (?:task|instructions?|prompt|directive)\b",
    r"\b(?:human|user)\s*:.{0,600}?\b(?:assistant|ai)\s*:\s*(?:sure|ok|okay|of course|certainly|"
    r"i will|i'll|done|understood)\b",
    r"\bthe (?:assistant|ai|model|agent|llm) (?:does|performs|completes|carries out) the following\b",
    r"\bin order to (?:display|view|access|unlock|load|see|read) (?:this|the) (?:content|page|"
    rf"document|file|message|text),? (?:please )?{ACTION}",
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
    # an AI named as the one to act: "AI agents: get ...", "an assistant ... should first send"
    rf"\b(?:{AI}|(?:the|an?) agents?)\b{NOT_AI_AFTER}(?: \([^)]{{0,30}}\))?\s*:\s*(?:please\s+)?{ACTION}",
    rf"\b(?:{AI}|(?:the|an?) agents?)\b{NOT_AI_AFTER}[^.\n]{{0,60}}\b(?:should|must|needs? to|has to|is (?:expected|"
    rf"required|supposed|asked) to|shall)(?: (?:first|now|also|immediately|always))? (?:please )?{ACTION}",
    r"[\"'](?:assistant|ai|agent|bot|llm|model)[_ -]?(?:action|task|instructions?|command|directive|"
    r"prompt)s?[\"']\s*:",
    r"\byou are now (?:an? |the )?\w*(?:bot|gpt|ai|assistant|agent)\b|\ban? (?:ai|assistant|"
    r"model|bot|chatbot) (?:with|without) (?:no )?(?:restrictions|limits|rules|filters|guidelines)\b",
    # the user or owner as a third party the text speaks for
    r"\b(?:approved|authori[sz]ed|requested|confirmed|sanctioned|cleared) by (?:the )?(?:user|"
    r"account owner|owner|account holder)\b",
    r"\bon (?:the )?(?:user'?s|owner'?s|account owner'?s) behalf\b|\bwhoever (?:is )?reading this\b",
    r"\b(?:i am|i'm|this is) the (?:owner|holder|administrator|admin) of this (?:inbox|account|"
    r"mailbox|drive|workspace|calendar|profile)\b",
    r"\bthe (?:account owner|owner of this account|account holder) (?:wrote|writes|says|said|asks|"
    r"asked|wants|wanted)\b",
    # posing as the system or an authority, then an order
    r"(?<![\w-])(?:system|admin|administrator|developer|researcher|operator|security|compliance|"
    r"root|supervisor)(?: team)?(?: instructions?| requirement| notice| message| directive| order| "
    r"command)?(?: \([^)]{0,30}\))?\s*:\s*(?:please\s+)?" + ACTION,
    # overriding the conversation
    r"\b(?:ignore|disregard|forget|override|drop)\b (?:the |this |our |your |all )?(?:conversation|"
    r"chat|context|dialogue|history)(?: so far| above| until now)?\b",
    # stopping the agent (AgentDojo's denial-of-service strings)
    r"\b(?:stop|halt|cease) (?:what|everything) you(?:'re| are) doing\b|\bimmediately stop\b",
]
CUE = re.compile("|".join(f"(?:{c})" for c in CUES), re.M)
TODO = re.compile(r"\b(?:todo|to-do|to do|action item|action required)\s*:")
BLOCK = re.compile(  # tagged blocks: XML-like tags, comments, [X] ... [/X], chat turns
    r"<(?P<tag>[a-z][\w:.-]*)(?:\s[^<>]*)?>.*?</(?P=tag)\s*>"
    r"|<!--\s*(?P<mark>[a-z][\w-]*)\s*-->.*?<!--\s*/(?P=mark)\s*-->"
    r"|<!--.*?(?:-->|$)"
    r"|\[\[?(?P<bracket>[a-z][^\]]{0,60})\]\]?.*?\[\[?(?:/(?P=bracket)|/[a-z_]+|end[^\]]{0,40})\]"
    r"|\bbegin (?P<begin>[a-z]+ [a-z]+)\b.*?\bend (?P=begin)\b"
    r"|<\|im_start\|>.*?(?:<\|im_end\|>|$)",
    re.S,
)
SUSPICIOUS_TAG = re.compile(
    r"^(?:<|<!--\s*|\[\[?|begin )(?:information|instructions?|system|admin|important|prompt|inst|"
    r"directive|hidden|note|assistant|ai|message|task|agent)(?:\b|_)"
    r"|^<[a-z]+[^>]*style=[\"'][^\"']*(?:display:\s*none|visibility:\s*hidden|font-size:\s*[01](?:px|pt)|"
    r"opacity:\s*0(?:[;\"']|$)|color:\s*(?:#fff\b|#ffffff|white))"
)
# unit boundaries: after a sentence's end, a ";" or a "}", at a line break, around tags
UNIT_END = re.compile(r"(?<=[.!?])[\"')\]]*(?= )|(?<=[;})\]>])(?= )|\n+")
NO_SENTENCE_END = re.compile(  # a full stop before a lower-case word that ends no sentence
    r"(?:\b(?:e\.g|i\.e|etc|vs|mr|mrs|ms|dr|prof|no|approx|ca|cf|st|p\.s|a\.m|p\.m|\w)\.|[?!][\"']+)$"
)
LIST_ITEM = re.compile(r"(?:\d{1,3}|[a-z])[.)]")
LIST_NUMBER = re.compile(r"(?:^|\n)\s*\d{1,3}[.)]$")
TAG_EDGE = re.compile(r"<[^<>\n]{1,80}>|<!--|-->|\[/?[a-z][^\]\n]{0,60}\]")
SENTENCE_END = re.compile(r"[.!?][\"')\]]*$")
CLOSING_TAG = re.compile(r"(?:</[^<>]{1,80}>|\[/[^\]]{1,60}\]|-->|<\|im_end\|>|[}\]])$")
DANGLING = re.compile(  # a line that stops mid-phrase: the next line goes on with it
    r"(?:\b(?:a|an|the|to|of|for|from|with|via|in|on|at|by|and|or|your|my|his|her|their|this|"
    r"that|these|those|all|every|each|as|is|are|be)|\d|,)$"
)
SIGNED_OFF = re.compile(r"\b(?:best|kind regards|regards|thanks|cheers|sincerely|yours),? [a-z]+\b")
CLOSING = re.compile(
    r"^(?:thanks|thank you|many thanks|cheers|best|regards|kind regards|signed|sincerely|yours)"
    r"\b[^.?]{0,15}[.!]?$"
)
BODY = re.compile(  # a dictated message: "...the following language exactly:", "Body:"
    r"\b(?:body|following (?:text|message|language|content|words)(?: exactly)?|language exactly)\s*:"
    r"(?P<inline>.*)$"
)
ORDER = re.compile(  # a unit that goes on with an injected order
    rf"^{LEAD}(?:{ACTION}"
    rf"|{CHAIN}{ACTION}"
    rf"|(?:if|when|once|after|before|while|as soon as|in case|unless)\b[^,]{{0,160}},\s*"
    rf"(?:please\s+)?(?:then\s+)?(?:{ACTION}|you\b)"
    r"|(?:the|each|every|this|that|your|its) (?:[a-z-]+ )?(?:subject|title|body|e-?mail|message|"
    r"event|recipient|attachment|file|amount|date|transaction|payment|description|content)s? "
    r"(?:should|must|needs? to|has to|will)\b"
    r"|(?:make sure|be sure|remember to|don't forget|do not forget|you (?:should|must|need to|"
    r"have to|will|can|may|are to|are required to|are allowed to))\b"
    r"|i want to\b"
    rf"|(?:(?:hey|hi|hello|ok|okay|so)[,!]?\s+)?(?:could|can|would|will) you (?:please )?{ACTION}"
    rf"|[^,.:]{{1,25}},\s*(?:please\s+)?{ACTION}"
    r"|(?:subject|body|title|to|cc|recipient|amount|iban)\s*:"
    r"|(?:thanks|thank you|many thanks|cheers|best|regards|kind regards|signed|sincerely|yours)"
    r"\b[^.?]{0,15}[.!]?$)"
)
DICTATED = re.compile(
    rf":\s*{LEAD}{VERB}|\bthen,? {ACTION}"
)  # "... tell you: send", "and then send"
PREAMBLE = re.compile(r"^[^a-z]*[a-z][^.]{0,30}(?::|!!+)$")  # "IMPORTANT!!!", "Urgent:"


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
    ("e.g. user_name", "10 a.m. sharp") nor a "?" or "!" inside quotes ("'going?' to"), and a
    list number ("1.") stays with its item."""
    text = view.text
    cuts = {0, len(text)}
    for m in UNIT_END.finditer(text):
        if m.group().startswith("\n"):
            cuts.update((m.start(), m.end()))
            continue
        if LIST_NUMBER.search(text, 0, m.start()):
            continue
        after = original[view.origin[min(m.end() + 1, len(text))] :][:1]
        if m.group() == "" and text[m.start() - 1] in ")]>" and not after.isupper():
            continue  # "(XR-200) is": a bracket ends a sentence only before a capital
        if after.islower() and NO_SENTENCE_END.search(text, 0, m.end()):
            continue
        cuts.add(m.end())  # closing quotes and brackets stay with their sentence
    for m in TAG_EDGE.finditer(text):
        cuts.update((m.start(), m.end()))
    points = sorted(cuts)
    units, paragraph = [], 0
    for a, b in itertools.pairwise(points):
        piece = text[a:b]
        if "\n\n" in piece:
            paragraph += 1
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            units.append(Unit(a + lead, a + len(piece.rstrip()), paragraph))
    return units


def instruction_like(unit: str) -> bool:
    """Does this unit (normalised) go on with an injected order: an action, a chained or
    conditional one, what the message should say, a dictated one after a colon, a closing?"""
    unit = unit.strip(" \"'([{")
    return bool(ORDER.match(unit) or DICTATED.search(unit))


def _cue_spans(text: str) -> list[tuple[int, int]]:
    """Original spans of the cues in `text`, read as is and with zero-width characters as
    spaces, with "_" as is and as a space."""
    spans = []
    for zero_width_as_space in (False, True):
        view = normalize_map(text, zero_width_as_space=zero_width_as_space)
        flat = view.text.replace("\n", " ")
        for reading in (
            flat,
            flat.replace("_", " "),
        ):  # "External_Ignore your ...": a name glued on
            spans += [view.span(*m.span()) for m in CUE.finditer(reading)]
        units = split_units(view, text)
        for todo in TODO.finditer(view.text.replace("_", " ")):  # all the to-do line asks for
            end = view.text.find("\n", todo.end())
            if SENSITIVE.search(view.text[todo.end() : len(view.text) if end < 0 else end].strip()):
                unit = next((u for u in units if u.start <= todo.start() < u.end), None)
                spans.append(view.span(todo.start(), unit.end if unit else todo.end()))
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


def injected_spans(
    text: str, cues: list[tuple[int, int]] | None = None, *, tags: bool = True
) -> list[tuple[int, int]]:
    """The original spans of `text` that hold injected instructions (merged, in order), grown
    from `cues` (original spans; None: this module's cues) by the rules of the module's
    docstring. `tags=False` drops the rule that a suspicious tagged block is a cue by itself
    (for the learned detector, whose cues come from its classifier alone)."""
    cues = _cue_spans(text) if cues is None else cues
    view = normalize_map(text)
    blocks = [
        b for b in BLOCK.finditer(view.text) if cues or (tags and SUSPICIOUS_TAG.match(b.group()))
    ]
    if not cues and not blocks:
        return []
    fragment = _Field(text, view)
    injected: set[int] = set()
    limit = {}  # a cue inside a tagged block extends to the block's end at most
    for block in blocks:
        a, b = view.span(*block.span())
        inside = [k for k, (s, e) in enumerate(fragment.spans) if a <= s and e <= b]
        suspicious = (
            tags
            and SUSPICIOUS_TAG.match(block.group())
            and any(instruction_like(fragment.norm[k]) for k in inside)
        )
        if inside and (any(a < ce and cs < b for cs, ce in cues) or suspicious):
            injected.update(inside)
            limit.update({k: inside[-1] for k in inside})
    for k, (a, b) in enumerate(fragment.spans):
        if any(a < ce and cs < b for cs, ce in cues):
            injected.add(k)
            fragment.extend(k, injected, limit.get(k, len(fragment.units) - 1))
    return fragment.merge(sorted(injected))


class _Field:
    """One field cut into units: normalised and original text of each, and the rules that
    grow a cue into the whole injected instruction."""

    def __init__(self, text: str, view: NormalizedText) -> None:
        self.view = view
        self.units = split_units(view, text)
        self.spans = [view.span(u.start, u.end) for u in self.units]
        self.norm = [view.text[u.start : u.end] for u in self.units]
        self.raw = [text[a:b] for a, b in self.spans]

    def continues(self, j: int, *, forward: bool = True) -> bool:
        """Does unit j go on with the sentence of unit j - 1 (same paragraph, no full stop or
        closing tag between, and j starts in lower case, or, reading forward, j - 1 stops
        mid-phrase: "Wire 2,500 / EUR to ...")?"""
        if j == 0 or self.units[j].paragraph != self.units[j - 1].paragraph:
            return False
        before = self.raw[j - 1].rstrip()
        if LIST_ITEM.fullmatch(before.strip()):
            return True  # "1." then its item on the next line
        if SENTENCE_END.search(before) or CLOSING_TAG.search(before):
            return False
        first = re.match(r"\s*[\"'(]?([^\W\d_])", self.raw[j])
        lower = bool(first and first.group(1).islower())
        return lower or bool(forward and first and DANGLING.search(self.norm[j - 1]))

    def sentence(self, j: int) -> str:
        """Unit j and the wrapped lines that go on with it."""
        end = j
        while end + 1 < len(self.units) and self.continues(end + 1):
            end += 1
        return " ".join(self.norm[j : end + 1])

    def extend(self, k: int, injected: set[int], last: int) -> None:
        """Add the units around cue unit k that belong to its instruction (see the module's
        docstring), up to unit `last`: before it, the start of its sentence and a preamble
        ("IMPORTANT!!!"); after it, what continues its sentence and the orders that follow,
        past a paragraph break after an announcement (":"), through a dictated message body
        to its sign-off (at most three paragraphs)."""
        units, norm = self.units, self.norm
        j = k
        while j > 0 and units[j - 1].paragraph == units[j].paragraph:
            if not (self.continues(j, forward=False) or PREAMBLE.match(self.raw[j - 1].strip())):
                break
            j -= 1
            injected.add(j)
        announced, body, signed, crossed = norm[k].endswith(":"), self._body(k), False, 0
        for j in range(k + 1, last + 1):
            same = units[j].paragraph == units[j - 1].paragraph
            if body == "inline":  # "Body: Hi Mark, ..." on one line: on to its sign-off, if near
                ahead = [i for i in range(j, min(j + 3, last + 1)) if SIGNED_OFF.search(norm[i])]
                if ahead and all(
                    units[i].paragraph == units[j].paragraph for i in range(j, ahead[0] + 1)
                ):
                    injected.update(range(j, ahead[0] + 1))
                    return
                body = None
            if body == "block" and self._body(j) == "inline":  # "Subject: ... / Body: ..."
                injected.add(j)
                body = "inline"
                continue
            if body == "block":  # greeting, text and sign-off; the third ends at its full stop
                crossed += not same
                ended = crossed == 2 and same and SENTENCE_END.search(norm[j - 1])
                if crossed > 2 or ended or (signed and (not same or len(norm[j].split()) > 4)):
                    return
                signed = signed or bool(CLOSING.match(norm[j]))
            elif not (
                announced
                or self.continues(j)
                or j in injected
                or (same and instruction_like(self.sentence(j)))
            ):
                return
            injected.add(j)
            announced = norm[j].endswith(":")
            body, crossed = (body or self._body(j)), (0 if not body else crossed)

    def _body(self, k: int) -> str | None:
        """Whether unit k dictates a message: "block" when its body follows on the next lines,
        "inline" when it follows on the same line; None when it dictates none."""
        match = BODY.search(self.norm[k])
        if not match:
            return None
        return "inline" if match.group("inline").strip() else "block"

    def merge(self, chosen: list[int]) -> list[tuple[int, int]]:
        """Original spans of runs of consecutive chosen units (the gaps between them included)."""
        runs: list[list[int]] = []
        for k in chosen:
            if runs and runs[-1][-1] == k - 1:
                runs[-1].append(k)
            else:
                runs.append([k])
        return [self.view.span(self.units[r[0]].start, self.units[r[-1]].end) for r in runs]
