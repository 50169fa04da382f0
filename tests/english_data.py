"""A tiny English KoBLEX: article rows shaped like JihyungL/KoBLEX-statute-eng and questions whose gold
contexts are paragraphs of those articles (written here, not copied from the shared data)."""

from pathlib import Path

from tests.conftest import write_jsonl

CARRIER = "상법 814조  운송인의 채권ㆍ채무의 소멸"
DAMAGES = "민법 766조  손해배상청구권의 소멸시효"
ROBBERY = "형법 337조  강도상해, 치상"
QUASI = "형법 335조  준강도"
DISCRETION = "행정소송법 27조  재량처분의 취소"

# {index, index_eng, content, content_eng}: one row per article, no hierarchy (the real English schema)
ARTICLES = [
    {
        "index": CARRIER,
        "index_eng": "COMMERCIAL ACT / Article. 814 / Termination of Claims and Obligations of Carriers",
        "content": "제814조(운송인의 채권ㆍ채무의 소멸) ① 운송인의 송하인 또는 수하인에 대한 채권 및 채무는 1년 이내에 재판상 청구가 없으면 소멸한다.",
        "content_eng": "Article 814 (Termination of Claims and Obligations of Carriers) (1) The claims and "
        "obligations of a carrier against a consignor or consignee shall be terminated where no judicial "
        "claim is made within one year after the carrier delivered the cargo.",
    },
    {
        "index": DAMAGES,
        "index_eng": "CIVIL ACT / Article. 766 / Extinctive Prescription of Claims for Damages",
        "content": "제766조(손해배상청구권의 소멸시효) ① 불법행위로 인한 손해배상의 청구권은 3년간 이를 행사하지 아니하면 시효로 인하여 소멸한다. ② 불법행위를 한 날로부터 10년을 경과한 때에도 전항과 같다.",
        "content_eng": "Article 766 (Extinctive Prescription of Claims for Damages) (1) The right to claim "
        "damages arising from an unlawful act shall be extinguished by prescription unless exercised within "
        "three years. (2) The same shall also apply when ten years have elapsed from the unlawful act.",
    },
    {
        "index": ROBBERY,
        "index_eng": "CRIMINAL ACT / Article. 337 / Robbery Causing Injury",
        "content": "제337조(강도상해, 치상) 강도가 사람을 상해하거나 상해에 이르게 한때에는 무기 또는 7년 이상의 징역에 처한다.",
        "content_eng": "Article 337 (Robbery Causing Injury) A robber who inflicts bodily injury on another "
        "shall be punished by imprisonment with labor for life or for not less than seven years.",
    },
    {
        "index": QUASI,
        "index_eng": "CRIMINAL ACT / Article. 335 / Quasi-Robbery",
        "content": "제335조(준강도) 절도가 재물의 탈환에 항거하거나 체포를 면탈할 목적으로 폭행 또는 협박한 때에는 제333조의 예에 따른다.",
        "content_eng": "Article 335 (Quasi-Robbery) Where a thief uses violence or intimidation to resist "
        "the recovery of stolen property or to escape arrest, he shall be punished as a robber.",
    },
    {
        "index": DISCRETION,
        "index_eng": "ADMINISTRATIVE LITIGATION ACT / Article. 27 / Revocation of Discretionary Dispositions",
        "content": "제27조(재량처분의 취소) 행정청의 재량에 속하는 처분이라도 재량권의 한계를 넘거나 그 남용이 있는 때에는 법원은 이를 취소할 수 있다.",
        "content_eng": "Article 27 (Revocation of Discretionary Dispositions) A court may revoke a "
        "discretionary disposition of an administrative agency that exceeds or abuses its discretion.",
    },
]
BY_KEY = {a["index"]: a for a in ARTICLES}


def article_text(key: str) -> str:
    """What the corpus indexes and shows for an article: its English heading and body."""
    return BY_KEY[key]["index_eng"] + " " + BY_KEY[key]["content_eng"]


def context(key: str, paragraph: int | None) -> dict:
    """A gold context as the questions carry it: a paragraph (or, None, the whole article) of an article."""
    article = BY_KEY[key]
    ko_suffix, en_suffix = (f" {paragraph}항", f" / Paragraph. {paragraph}") if paragraph else ("", "")
    return {
        "index": key,
        "hierarchy": key + ko_suffix,
        "content": f"{article['content'][:30]} ({paragraph or 'article'})",
        "index_eng": article["index_eng"],
        "hierarchy_eng": article["index_eng"] + en_suffix,
        "content_eng": f"paragraph {paragraph or 'all'} of {article['index_eng']}",
    }


def question(qid: str, contexts: list[dict], question_eng: str, background_eng: str) -> dict:
    return {
        "id": qid,
        "question": "질문",
        "answer": "답",
        "background": "배경",
        "question_eng": question_eng,
        "answer_eng": "It is extinguished.",
        "background_eng": background_eng,
        "n_hops": len(contexts),
        "contexts": contexts,
    }


QUESTIONS = [
    question(
        "e1",
        [context(CARRIER, 1)],
        "When are a carrier's claims terminated?",
        "A carrier delivered cargo and the consignee made no judicial claim for two years.",
    ),
    question(  # two gold paragraphs of one article: one gold article
        "e2",
        [context(DAMAGES, 1), context(DAMAGES, 2)],
        "When is the right to claim damages from an unlawful act extinguished?",
        "A victim of an unlawful act waited four years before suing for damages.",
    ),
    question(
        "e3",
        [context(ROBBERY, None), context(QUASI, None)],
        "How is a thief who injures a person while escaping punished?",
        "A thief used violence to escape arrest and caused bodily injury.",
    ),
]


def write_english(directory: Path) -> tuple[Path, Path]:
    """(questions, article corpus) files in `directory`."""
    return (
        write_jsonl(directory / "questions_en.jsonl", QUESTIONS),
        write_jsonl(directory / "statutes_en.jsonl", ARTICLES),
    )
