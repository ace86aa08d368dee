"""Seeded filler prose per domain: sentence templates + word lists (no lorem ipsum).

The word lists deliberately avoid every name, number and phrase that a gold question asks
about (for example "delegated acts", "ECG", "GPU", dates), so filler can never answer or
contradict a question.
"""

from __future__ import annotations

import random

LEX = {
    "finance": {
        "S": ["The Group", "Management", "The Board", "Each business unit", "Our operations team",
              "The finance function", "Regional leadership", "The executive committee",
              "Our commercial team", "The audit committee"],
        "V": ["continued to focus on", "invested further in", "strengthened", "reviewed",
              "made steady progress on", "prioritised", "monitored closely", "renewed its attention to",
              "took further steps to improve", "reported regularly on"],
        "O": ["operational efficiency across the port estate", "working capital discipline",
              "the resilience of our supply chain services", "customer retention in contract logistics",
              "the digitalisation of yard operations", "safety performance at every site",
              "the quality of earnings", "the pricing of long-term service agreements",
              "the integration of recently acquired businesses", "energy use in our warehouses",
              "the maintenance backlog for quay cranes", "the skills of our frontline colleagues",
              "the cost of customs brokerage", "capacity planning for the peak season",
              "the governance of major capital projects"],
        "C": ["reflecting the priorities set out in our strategy", "in line with the framework agreed by the Board",
              "while maintaining a disciplined approach to capital allocation",
              "supported by a clear set of performance indicators",
              "as market conditions normalised after a volatile period",
              "with the aim of creating long-term value for shareholders",
              "taking into account the views of our stakeholders",
              "despite continued pressure on input costs",
              "building on the foundations laid in previous years"],
        "N": ["approach", "programme", "discipline", "investment", "initiative", "framework"],
        "V2": ["underpins", "supports", "reinforces", "complements", "protects"],
        "O2": ["our ability to serve customers reliably", "the cash generation of the business",
               "the long-term competitiveness of our network", "the trust of our lenders",
               "a culture of accountability", "the returns we earn on invested capital"],
    },
    "medical": {
        "S": ["The investigator", "The sponsor", "Site staff", "The study coordinator",
              "The independent data monitoring committee", "The medical monitor", "Each participant",
              "The pharmacy team", "The clinical research associate", "The safety physician"],
        "V": ["will document", "is responsible for recording", "must review", "will confirm",
              "shall verify", "will report", "should assess", "will retain"],
        "O": ["all concomitant medications in the electronic case report form",
              "the completeness of the headache diary entries",
              "each protocol deviation and its likely impact on participant safety",
              "the storage temperature of the investigational product",
              "the participant's understanding of the informed consent form",
              "any change in the participant's medical history since the previous visit",
              "the results of laboratory safety tests", "the reconciliation of returned study drug",
              "the source documents against the data entered", "the participant's adherence to dosing"],
        "C": ["in accordance with Good Clinical Practice", "before the next scheduled visit",
              "as described in the monitoring plan", "within the timelines agreed with the sponsor",
              "in line with applicable local regulations", "using the procedures in the study manual",
              "so that data quality can be assessed centrally", "while protecting participant confidentiality"],
        "N": ["procedure", "requirement", "process", "safeguard", "measure"],
        "V2": ["ensures", "supports", "protects", "maintains", "helps to preserve"],
        "O2": ["the integrity of the blinded data", "participant safety throughout the study",
               "the reliability of the efficacy assessments", "consistent practice across sites",
               "the traceability of every dose dispensed"],
    },
    "legal": {
        "S": ["Member States", "The competent authority", "The operator", "The owner of the vessel",
              "The recognised classification society", "The notified body", "The master of the vessel",
              "The inspection body"],
        "V": ["shall ensure", "shall verify", "shall take appropriate measures to ensure",
              "shall keep records demonstrating", "shall notify the Commission where it finds",
              "shall be able to demonstrate"],
        "O": ["that the equipment on board is maintained in a safe condition",
              "that crew members receive adequate instruction in emergency procedures",
              "that certificates are kept on board and made available on request",
              "that any modification affecting stability is assessed before the vessel resumes service",
              "that the information supplied in the application is complete and accurate",
              "that defects identified during an inspection are rectified without undue delay",
              "that procedures for the reporting of incidents are in place",
              "that the technical documentation is retained for the lifetime of the vessel",
              "that the conditions attached to the certificate continue to be met",
              "that persons carrying out inspections are free from conflicts of interest"],
        "C": ["in accordance with this Regulation", "without prejudice to national rules on liability",
              "taking into account the size and type of the vessel", "in a proportionate manner",
              "having regard to the generally acknowledged state of the art",
              "within the limits of their respective competences"],
        "N": ["obligation", "requirement", "measure", "procedure"],
        "V2": ["shall apply", "shall be without prejudice", "shall be reviewed"],
        "O2": [],
    },
    "technical": {
        "S": ["The operator", "Qualified personnel", "The installer", "Maintenance staff",
              "The commissioning engineer", "The plant owner"],
        "V": ["must check", "should verify", "must confirm", "should inspect", "must record",
              "is advised to check"],
        "O": ["that all connections are free of mechanical stress",
              "the condition of the frame and carrying bar", "that the drain valves are closed",
              "the alignment of the pressure plate", "that the pipework is adequately supported",
              "the gauges for stable readings", "that the venting points are accessible",
              "the foundation for cracks or settlement", "that all guards are refitted",
              "the surface of the plates for deposits", "that the media match the order specification"],
        "C": ["before the unit is pressurised", "after any period of standstill",
              "when the unit has cooled to ambient temperature", "as part of the routine inspection",
              "before the unit is returned to service", "in accordance with local safety rules",
              "using calibrated tools only"],
        "N": ["check", "step", "procedure", "precaution"],
        "V2": ["reduces", "helps to avoid", "prevents", "limits"],
        "O2": ["damage to the gaskets", "unplanned downtime", "the risk of external leakage",
               "fouling of the heat transfer surfaces", "uneven loading of the plate pack"],
    },
    "science": {
        "S": ["We", "Our method", "The retriever", "The reader model", "Our analysis",
              "The page encoder", "This design"],
        "V": ["reduces", "improves", "captures", "exploits", "preserves", "avoids", "balances"],
        "O": ["the number of tokens passed to the reader", "the recall of relevant pages",
              "long-range dependencies between sections", "the layout signal of tables and headings",
              "redundant context from neighbouring pages", "latency at inference time",
              "the precision of the evidence set", "sensitivity to document length"],
        "C": ["without additional supervision", "across all three benchmarks",
              "at a modest computational cost", "compared with dense retrieval alone",
              "under the same token budget", "when documents exceed a few hundred pages"],
        "N": ["result", "finding", "observation", "trend"],
        "V2": ["suggests", "indicates", "is consistent with", "confirms"],
        "O2": ["that retrieval quality is the main bottleneck", "that page-level sparsity matters",
               "that layout cues carry useful signal", "that longer contexts dilute attention"],
    },
    "narrative": {
        "S": ["The wind", "The sea", "The lamp", "The old keeper", "Thomas", "The fog",
              "The tower", "The gulls", "The night"],
        "V": ["pressed against", "moved over", "settled upon", "worried at", "turned towards",
              "gathered around", "fell across"],
        "O": ["the iron gallery", "the narrow window of the watch room", "the black rocks below the point",
              "the stone steps", "the kitchen table with its oilcloth", "the brass of the lens",
              "the empty shingle", "the coal store by the wall", "the long grey line of the horizon"],
        "C": ["as if it had somewhere better to be", "and did not let go for a long while",
              "with a patience that Thomas found unsettling", "in the way it had done for a hundred years",
              "while the clock ticked on the shelf", "until the light failed altogether"],
        "N": ["silence", "cold", "sound", "stillness"],
        "V2": ["filled", "crept into", "hung over", "lay upon"],
        "O2": ["every corner of the tower", "the small hours", "his thoughts",
               "the rooms where nobody spoke"],
    },
}


FREE = {
    "finance": ["Cash conversion remained strong throughout the year.",
                "We continue to see opportunities to grow in adjacent markets.",
                "Customer feedback was gathered through structured reviews with our largest accounts.",
                "The Board discussed the long-term plan at its strategy day in the autumn.",
                "Inflation in wages and energy continued to affect the cost base.",
                "Contract renewals were secured with most of our key customers."],
    "medical": ["Any deviation from this procedure must be documented and explained.",
                "Participants may withdraw their consent at any time without giving a reason.",
                "The investigator remains responsible for the medical care of each participant.",
                "Unused study drug must be returned to the pharmacy for reconciliation.",
                "Questions about this section should be directed to the medical monitor."],
    "legal": ["The obligations laid down in this Article shall be without prejudice to national law.",
              "Member States shall inform the Commission of the measures adopted.",
              "The competent authority may request additional information where necessary.",
              "Such measures shall be effective, proportionate and dissuasive."],
    "technical": ["Observe all warning labels on the unit.",
                  "Wear protective gloves and eye protection when handling plates.",
                  "Never loosen the tie bolts while the unit is under pressure.",
                  "Record all readings in the operating log.",
                  "Contact the Kestrel service department if in doubt.",
                  "Use only original spare parts."],
    "science": ["We leave a systematic study of this effect to future work.",
                "Qualitatively, most errors stem from missed evidence pages.",
                "The gains are largest on questions that need tables.",
                "Results are averaged over three runs with different seeds.",
                "This matches the intuition that most pages are irrelevant to a given question.",
                "Appendix A lists all hyperparameters."],
    "narrative": ["Thomas thought of the mainland and of the lamps in the harbour windows.",
                  "\"Mind the third step,\" said the old keeper, \"it has been loose since the spring.\"",
                  "Somewhere below, a door banged and was still.",
                  "He trimmed the wick, polished the glass and wrote up the weather in the book.",
                  "The kettle sang on the range, and neither man spoke for some time.",
                  "There was bread, and a little cheese, and tea that tasted of the tin.",
                  "Thomas climbed the hundred and twelve steps with the oil can knocking against his knee.",
                  "\"You will get used to the noise,\" the old keeper said. \"Or you will not.\"",
                  "Out on the water a single gull rode the swell like a scrap of paper.",
                  "At night the beam swept over the rocks, and the rocks swept back into darkness."],
}


class Prose:
    def __init__(self, domain: str, seed: int):
        self.lex = LEX[domain]
        assert domain in FREE
        self.domain = domain
        self.rng = random.Random(seed)

    @staticmethod
    def _low(s: str) -> str:
        return s if s in ("Thomas", "Member States") else s[0].lower() + s[1:]

    def sentence(self) -> str:
        r = self.rng
        L = self.lex
        free = FREE[self.domain]
        if r.random() < (0.35 if self.domain == "narrative" else 0.15):
            return r.choice(free)
        pat = r.randrange(5 if L["O2"] else 4)
        if pat == 1 and self.domain == "narrative":
            pat = 0
        s, v, o, c = r.choice(L["S"]), r.choice(L["V"]), r.choice(L["O"]), r.choice(L["C"])
        if pat == 0:
            return f"{s} {v} {o}, {c}."
        if pat == 1:
            return f"{c[0].upper() + c[1:]}, {self._low(s)} {v} {o}."
        if pat == 2:
            return f"{s} {v} {o}."
        if pat == 3:
            s2, v2 = r.choice(L["S"]), r.choice(L["V"])
            return f"{s} {v} {o}, and {self._low(s2)} {v2} {r.choice(L['O'])}."
        return f"This {r.choice(L['N'])} {r.choice(L['V2'])} {r.choice(L['O2'])}."

    def paragraph(self, n_min=3, n_max=6) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(n_min, n_max)))
