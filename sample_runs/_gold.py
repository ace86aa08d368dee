"""Gold questions for the sample benchmark, in the release schema (spec section 2).

Every evidence item points at an anchor recorded while the PDF was laid out, so pages and
quotes always match the generated documents. Besides the gold fields, each question carries
run-simulation hints (`wrong`: plausible wrong answers such as a neighbouring cell or a value
from another page; `unit`; `alts`: other correct phrasings) that never reach the gold files.
"""

from __future__ import annotations

from datetime import date


def E(doc, anchor, src, elems=(), bbox=True):
    return {"doc": doc, "anchor": anchor, "src": src, "elems": list(elems), "bbox": bbox}


NA = "Not answerable"

QUESTIONS = [
    # ------------------------------------------------------------------ finance_business
    dict(k="fin_ws_growth", doc="fin", t="comparison", d="hard", f="Float", r="numeric_tolerance",
         q="By how many EUR million did revenue of the Warehousing segment increase from 2022 to 2023?",
         a="33.9", unit="EUR million", wrong=["37.9", "18.1", "34.9"],
         ev=[E("fin", "seg22_2", "Table", ["Table 2"]), E("fin", "seg23_2", "Table", ["Table 2"])]),
    dict(k="fin_margin_rank", doc="fin", t="ranking", d="very_hard", f="Str", r="casefold_exact_match",
         q="Using segment revenue from Table 2 and segment operating profit from Figure 3, which segment had "
           "the highest operating margin in 2023?",
         a="Warehousing", wrong=["Container Terminals", "Marine Services"], alts=["Warehousing segment"],
         ev=[E("fin", "seg23_2", "Table", ["Table 2"]), E("fin", "fig3", "Chart", ["Figure 3"])]),
    dict(k="fin_emp_decline", doc="fin", t="set_difference", d="hard", f="Str", r="casefold_exact_match",
         q="Which regions had fewer employees at 31 December 2023 than at 31 December 2022?",
         a="Germany and United Kingdom", wrong=["Germany", "United Kingdom", "Germany, Sweden and United Kingdom"],
         swap="United Kingdom and Germany",
         ev=[E("fin", "emp_1", "Table", ["Table 4"]), E("fin", "emp_4", "Table", ["Table 4"])]),
    dict(k="fin_rev_5y", doc="fin", t="aggregation", d="very_hard", f="Float", r="numeric_tolerance",
         q="What is the total Group revenue over the five years 2019 to 2023 shown in the five-year summary, "
           "in EUR million?",
         a="6228.0", unit="EUR million", wrong=["4815.4", "6815.4"], fmt_thousands="6,228.0",
         ev=[E("fin", "five_0_2019", "Table", ["Table 9"]), E("fin", "five_0_2023", "Table", ["Table 9"])]),
    dict(k="fin_div_low", doc="fin", t="temporal", d="hard", f="Str", r="casefold_exact_match",
         q="In which year of the five-year summary was the dividend per share at its lowest?",
         a="2020", wrong=["2019", "2021"],
         ev=[E("fin", "five_8_2020", "Table", ["Table 9"])]),
    dict(k="fin_op_recon", doc="fin", t="reconciliation", d="very_hard", f="Int", r="numeric_tolerance",
         q="By how many EUR million does operating profit in the consolidated income statement differ from the "
           "sum of the segment operating profits shown in Figure 3?",
         a="0", unit="EUR million", wrong=["0.4", "15.5"],
         ev=[E("fin", "inc_op", "Table", ["Table 7"]), E("fin", "fig3", "Chart", ["Figure 3"])]),
    dict(k="fin_div_cf", doc="fin", t="counterfactual", d="very_hard", f="Float", r="numeric_tolerance",
         q="If the total dividend per share had grown at the same rate as Group revenue in 2023, what would it "
           "have been, in cents?",
         a="23.8", unit="cents", wrong=["26.6", "24.5"],
         ev=[E("fin", "chair_rev", "Text"), E("fin", "chair_div", "Text")]),
    dict(k="fin_co2_choice", doc="fin", t="compliance", d="very_hard", f="Str", r="choice_exact_match",
         q="Northwind aims to cut Scope 1 and 2 emissions by 42% against the 2019 baseline by 2030. How much of "
           "that targeted reduction had been achieved by 2023? A) less than a quarter B) between a quarter and "
           "a half C) between a half and three quarters D) more than three quarters",
         a="C", wrong=["B", "D"],
         ev=[E("fin", "co2_target", "Text"), E("fin", "fig5", "Chart", ["Figure 5"])]),
    dict(k="fin_co2_pct", doc="fin", t="comparison", d="hard", f="Float", r="percentage_exact",
         q="According to Figure 5, by what percentage did Scope 1 and 2 emissions fall between 2019 and 2023?",
         a="26.9%", wrong=["12.5%", "0.269", "111"],
         ev=[E("fin", "fig5", "Chart", ["Figure 5"])]),
    dict(k="fin_attend", doc="fin", t="ranking", d="hard", f="Str", r="casefold_exact_match",
         q="Which director had the lowest attendance rate at scheduled Board meetings in 2023?",
         a="Rahul Menon", wrong=["Hannah Achterberg", "Tomasz Wierzbicki"],
         ev=[E("fin", "board_att_4", "Table", ["Table 6"])]),
    dict(k="fin_newest_dir", doc="fin", t="temporal", d="hard", f="Str", r="casefold_exact_match",
         q="Who is the most recently appointed member of the Board of Directors?",
         a="Hannah Achterberg", wrong=["Sofia Lindqvist", "Claire Dubois"],
         ev=[E("fin", "board_app_6", "Table", ["Table 6"])]),
    dict(k="fin_toc_gov", doc="fin", t="reference_chain", d="hard", f="Int", r="numeric_tolerance",
         q="According to the contents page, on which page does the Governance report begin?",
         a=lambda c: str(c["fin"]["gov_head"]["page"]), unit="", wrong=["34", "26"],
         ev=[E("fin", "toc_gov", "Layout", ["Contents"])]),
    dict(k="fin_days_ye", doc="fin", t="temporal", d="hard", f="Int", r="numeric_tolerance",
         q="How many days after the Eastport terminal expansion opened did the Group's 2023 financial year end?",
         a=str((date(2023, 12, 31) - date(2023, 10, 18)).days), unit="days", wrong=["73", "63", "43"],
         ev=[E("fin", "ceo_eastport", "Text"), E("fin", "ye", "Text")]),
    dict(k="fin_na_baltic", doc="fin", t="unanswerable", d="hard", f="None", r="exact_match",
         q="How much revenue did Baltic Reach Logistics contribute to the Group in the first quarter of 2024?",
         a=NA, wrong=["EUR 24.3 million", "EUR 96.0 million"], ev=[]),
    dict(k="fin_tax_rate", doc="fin", t="aggregation", d="very_hard", f="Float", r="percentage_exact",
         q="What was the Group's effective tax rate in 2023 (income tax expense divided by profit before tax), "
           "in percent to one decimal place?",
         a="24.0", wrong=["31.6", "23.1"],
         ev=[E("fin", "inc_pbt", "Table", ["Table 7"]), E("fin", "inc_tax", "Table", ["Table 7"])]),
    dict(k="fin_hl_emp", doc="fin", t="comparison", d="hard", f="Int", r="numeric_tolerance",
         q="According to the '2023 at a glance' page, by how many people did the year-end headcount rise "
           "compared with 2022?",
         a="270", unit="employees", wrong=["9840", "207"],
         ev=[E("fin", "hl_emp", "Layout", ["2023 at a glance"])]),
    # ------------------------------------------------------------------ medical_clinical
    dict(k="med_months", doc="med", t="temporal", d="hard", f="Int", r="numeric_tolerance",
         q="To the nearest month, how many months passed between the original protocol (version 1.0) and "
           "Amendment 2 (version 3.0)?",
         a="20", unit="months", wrong=["11", "9", "32"],
         ev=[E("med", "hist_v1", "Table", ["Table 1"]), E("med", "hist_v3", "Table", ["Table 1"])]),
    dict(k="med_new_countries", doc="med", t="set_difference", d="hard", f="Str", r="casefold_exact_match",
         q="Which participating countries listed in Appendix 2 had no study sites under protocol version 2.0?",
         a="Poland and Czech Republic", wrong=["Italy", "Poland", "Italy, Poland and Czech Republic"],
         swap="Czech Republic and Poland",
         ev=[E("med", "hist_sites", "Text"), E("med", "ctry_4", "Table", ["Table 8"]),
             E("med", "ctry_5", "Table", ["Table 8"])]),
    dict(k="med_placebo_pct", doc="med", t="aggregation", d="hard", f="Float", r="percentage_exact",
         q="What percentage of the planned participants will be randomised to placebo?",
         a="33.3%", wrong=["50%", "66.7%"],
         ev=[E("med", "syn_n", "Table", ["Table 2"])]),
    dict(k="med_eligible", doc="med", t="compliance", d="very_hard", f="Str", r="choice_exact_match",
         q="Based on the inclusion and exclusion criteria, which candidate is eligible for the study? "
           "A) 67 years old, 18 headache days and 9 migraine days per month, BMI 27 "
           "B) 38 years old, 17 headache days and 9 migraine days per month, BMI 31 "
           "C) 45 years old, 14 headache days and 8 migraine days per month, BMI 24 "
           "D) 52 years old, 20 headache days and 10 migraine days per month, onabotulinumtoxinA 2 months "
           "before screening",
         a="B", wrong=["D", "C"],
         ev=[E("med", "inc1", "Text", ["Section 4.1"]), E("med", "inc4", "Text", ["Section 4.1"]),
             E("med", "exc7", "Text", ["Section 4.2"])]),
    dict(k="med_dose_g3", doc="med", t="reference_chain", d="very_hard", f="Str", r="casefold_exact_match",
         q="A participant on velorexant has a Grade 3 hepatic adverse event. Following the rules that "
           "Section 5.4 points to, at what daily dose is treatment resumed after recovery?",
         a="50 mg", unit="", wrong=["75 mg", "Discontinue permanently"], alts=["50 mg once daily"],
         ev=[E("med", "hep_ref", "Text", ["Section 5.4"]), E("med", "dose_g3", "Table", ["Table 5"])]),
    dict(k="med_ecg", doc="med", t="coverage", d="hard", f="Int", r="numeric_tolerance",
         q="At how many scheduled visits is a 12-lead ECG recorded?",
         a="4", unit="visits", wrong=["5", "3", "9"],
         ev=[E("med", "soa_ecg", "Table", ["Table 6"])]),
    dict(k="med_cf_1to1", doc="med", t="counterfactual", d="very_hard", f="Int", r="numeric_tolerance",
         q="If the planned total number of participants had been randomised 1:1 instead of 2:1, how many more "
           "participants would receive placebo?",
         a="102", unit="participants", wrong=["204", "306"],
         ev=[E("med", "syn_n", "Table", ["Table 2"]), E("med", "ss", "Text", ["Section 8.1"])]),
    dict(k="med_mmrm", doc="med", t="reference_chain", d="very_hard", f="Str", r="casefold_exact_match",
         q="Apart from treatment, visit, treatment-by-visit interaction and baseline monthly migraine days, "
           "which fixed effect does the model used for the primary analysis include?",
         a="geographic region", wrong=["prior preventive failure", "site"], near="geographical region",
         ev=[E("med", "prim_ref", "Text", ["Section 8.2"]), E("med", "mmrm", "Text", ["Section 8.4"])]),
    dict(k="med_enrol400", doc="med", t="temporal", d="hard", f="Int", r="numeric_tolerance",
         q="In the projected enrolment chart, in which month after first randomisation does cumulative "
           "enrolment first exceed 400 participants?",
         a="9", unit="", wrong=["8", "10"], alts=["Month 9"],
         ev=[E("med", "fig2", "Chart", ["Figure 2"])]),
    dict(k="med_ole_dose", doc="med", t="reference_chain", d="hard", f="Str", r="casefold_exact_match",
         q="According to the study design schema, which velorexant doses can participants receive in the "
           "open-label extension?",
         a="50 mg or 75 mg", wrong=["75 mg", "50 mg"], swap="75 mg or 50 mg",
         ev=[E("med", "fig1_ole", "Figure", ["Figure 1"])]),
    dict(k="med_na_result", doc="med", t="unanswerable", d="very_hard", f="None", r="exact_match",
         q="What mean reduction in monthly migraine days versus placebo did velorexant achieve at Week 12?",
         a=NA, wrong=["1.8 days", "2.4 days"], ev=[]),
    dict(k="med_na_cro", doc="med", t="unanswerable", d="hard", f="None", r="exact_match",
         q="Which contract research organisation monitors the study sites in Poland?",
         a=NA, wrong=["Baltic Clinical Research", "Halden Therapeutics AB"], ev=[]),
    dict(k="med_n_increase", doc="med", t="reconciliation", d="hard", f="Int", r="numeric_tolerance",
         q="By how many participants did Amendment 2 increase the planned sample size?",
         a="72", unit="participants", wrong=["612", "60"],
         ev=[E("med", "hist_n2", "Table", ["Table 1"]), E("med", "ss", "Text", ["Section 8.1"])]),
    # ------------------------------------------------------------------ legal_regulation
    dict(k="leg_lifting", doc="leg", t="reference_chain", d="very_hard", f="Str", r="casefold_exact_match",
         q="Under Article 14(2), what is the longest permitted interval between periodic inspections of "
           "lifting gear?",
         a="6 months", wrong=["12 months", "24 months"], near="six months",
         ev=[E("leg", "art14_2", "Text", ["Article 14"]), E("leg", "art22", "Text", ["Article 22"]),
             E("leg", "ann3_B", "Table", ["Annex III"])]),
    dict(k="leg_small_fee", doc="leg", t="reference_chain", d="very_hard", f="Int", r="numeric_tolerance",
         q="What fee, in EUR, does a small operator pay for the renewal of a certificate?",
         a="460", unit="EUR", wrong=["1150", "690"], sci="4.6e2",
         ev=[E("leg", "art45_3", "Text", ["Article 45"]), E("leg", "fee_renew", "Table", ["Annex IV"])]),
    dict(k="leg_delegated", doc="leg", t="coverage", d="very_hard", f="Int", r="numeric_tolerance",
         q="How many Articles of the Regulation empower the Commission to adopt delegated acts?",
         a="3", unit="", wrong=["1", "2", "4"],
         ev=[E("leg", "del12", "Text", ["Article 12"]), E("leg", "del39", "Text", ["Article 39"]),
             E("leg", "del61", "Text", ["Article 61"])]),
    dict(k="leg_eif", doc="leg", t="temporal", d="very_hard", f="Str", r="casefold_exact_match",
         q="On what date does the Regulation enter into force?",
         a="5 December 2023", wrong=["1 July 2025", "28 November 2023", "15 November 2023"], near="5 Dec 2023",
         ev=[E("leg", "oj_date", "Layout", ["Official Journal cover"]), E("leg", "art72_eif", "Text", ["Article 72"])]),
    dict(k="leg_relief", doc="leg", t="compliance", d="hard", f="Str", r="casefold_exact_match",
         q="An onboard heat exchanger with a maximum allowable working pressure of 16 bar has its pressure "
           "relief device set at 18 bar. Does this comply with Article 31(2)? Answer Yes or No.",
         a="No", wrong=["Yes"], alts=["No, the limit is 17.6 bar"],
         ev=[E("leg", "art31_16", "Text", ["Article 31"]), E("leg", "art31_110", "Text", ["Article 31"])]),
    dict(k="leg_keel", doc="leg", t="temporal", d="hard", f="Str", r="casefold_exact_match",
         q="By what date must a vessel whose keel was laid in 2018 comply with Article 31?",
         a="31 December 2027", wrong=["1 July 2025", "1 January 2026"],
         ev=[E("leg", "art66", "Text", ["Article 66"])]),
    dict(k="leg_no_interval", doc="leg", t="set_difference", d="hard", f="Str", r="casefold_exact_match",
         q="Which equipment category listed in Annex I has no maximum inspection interval in Annex III?",
         a="Mooring equipment", wrong=["Navigation equipment", "Category F", "Hull and structure"],
         ev=[E("leg", "ann1_F", "Table", ["Annex I"]), E("leg", "ann3_table", "Table", ["Annex III"])]),
    dict(k="leg_lowest", doc="leg", t="ranking", d="hard", f="Str", r="casefold_exact_match",
         q="Which Member State had the lowest compliance rate in the 2022 pilot inspection programme?",
         a="Dunmark", wrong=["Brevania", "Estavia"], near="Dunmarck",
         ev=[E("leg", "stat_dunmark", "Table", ["Annex V"])]),
    dict(k="leg_aldoria_nl", doc="leg", t="comparison", d="hard", f="Float", r="percentage_exact",
         q="Wat was het nalevingspercentage van Aldoria in het proefinspectieprogramma van 2022 (Bijlage V)?",
         a="89,9", wrong=["84,2", "91,7"],
         ev=[E("leg", "stat_aldoria", "Table", ["Annex V"])]),
    dict(k="leg_oj", doc="leg", t="reference_chain", d="hard", f="Str", r="casefold_exact_match",
         q="In which issue of the Official Journal (series and number) was the Regulation published, as "
           "printed in the page headers?",
         a="L 311", wrong=["L 117", "2023/117"],
         ev=[E("leg", "oj_issue", "Layout", ["Official Journal cover"]), E("leg", "hdr_45", "Layout", ["page header"])]),
    dict(k="leg_cf_months", doc="leg", t="counterfactual", d="hard", f="Int", r="numeric_tolerance",
         q="If Articles 45 and 58 applied from the same date as the rest of the Regulation, how many months "
           "earlier would they apply?",
         a="6", unit="months", wrong=["12", "18"],
         ev=[E("leg", "art72_apply", "Text", ["Article 72"]), E("leg", "art72_late", "Text", ["Article 72"])]),
    dict(k="leg_na_fine", doc="leg", t="unanswerable", d="hard", f="None", r="exact_match",
         q="What was the highest fine imposed under Article 58 in 2024?",
         a=NA, wrong=["EUR 2 000 000", "4% of turnover"], ev=[]),
    dict(k="leg_vessels", doc="leg", t="aggregation", d="very_hard", f="Int", r="numeric_tolerance",
         q="How many vessels were inspected in total in the 2022 pilot inspection programme?",
         a="5210", unit="vessels", wrong=["4252", "4568"], fmt_thousands="5,210",
         ev=[E("leg", "stat_table", "Table", ["Annex V"])]),
    # ------------------------------------------------------------------ technical_engineering
    dict(k="tec_torque", doc="tec", t="reference_chain", d="hard", f="Int", r="numeric_tolerance",
         q="What tightening torque, in Nm, applies to the tie bolts of the HX-440?",
         a="680", unit="Nm", wrong=["350", "1150"],
         ev=[E("tec", "bolts", "Text", ["Section 6"]), E("tec", "tq_m30", "Table", ["Table 6-1"])]),
    dict(k="tec_cold_inlet", doc="tec", t="reference_chain", d="hard", f="Str", r="casefold_exact_match",
         q="According to Figure 4-2, which connection is the cold medium inlet?",
         a="S3", wrong=["S4", "S1"],
         ev=[E("tec", "fig42_s3", "Figure", ["Figure 4-2"], bbox=False)]),
    dict(k="tec_dp_nominal", doc="tec", t="reference_chain", d="very_hard", f="Float", r="numeric_tolerance",
         q="According to Figure 5-3, what is the pressure drop of the HX-420 at its nominal flow rate, in bar?",
         a="1.9", unit="bar", wrong=["1.34", "2.55"],
         ev=[E("tec", "spec_3_HX-420", "Table", ["Table 3-1"]), E("tec", "fig53", "Chart", ["Figure 5-3"])]),
    dict(k="tec_area_per_kg", doc="tec", t="ranking", d="very_hard", f="Str", r="casefold_exact_match",
         q="Which HX-400 model has the largest heat transfer area per kilogram of dry weight?",
         a="HX-420", wrong=["HX-410", "HX-460"], near="HX-240",
         ev=[E("tec", "spec_4_lab", "Table", ["Table 3-1"]), E("tec", "spec_6_lab", "Table", ["Table 3-1"])]),
    dict(k="tec_weight_diff", doc="tec", t="comparison", d="hard", f="Int", r="numeric_tolerance",
         q="How much heavier, in kg, is an HX-460 than an HX-440 (dry weight)?",
         a="570", unit="kg", wrong=["530", "1480"],
         ev=[E("tec", "spec_6_HX-460", "Table", ["Table 3-1"])]),
    dict(k="tec_flow_pct", doc="tec", t="comparison", d="hard", f="Float", r="percentage_exact",
         q="By what percentage does the nominal flow rate of the HX-460 exceed that of the HX-440?",
         a="57.1%", wrong=["36.4%", "80"],
         ev=[E("tec", "spec_3_HX-460", "Table", ["Table 3-1"])]),
    dict(k="tec_units", doc="tec", t="counterfactual", d="very_hard", f="Int", r="numeric_tolerance",
         q="How many HX-420 units would be needed to provide at least the heat transfer area of one HX-460?",
         a="4", unit="units", wrong=["3", "5"],
         ev=[E("tec", "spec_4_HX-420", "Table", ["Table 3-1"]), E("tec", "spec_4_HX-460", "Table", ["Table 3-1"])]),
    dict(k="tec_hx460_rev", doc="tec", t="temporal", d="hard", f="Str", r="casefold_exact_match",
         q="In which month and year was the revision of this manual that added the HX-460 model issued?",
         a="September 2021", wrong=["March 2023", "November 2020"], near="Sept 2021",
         ev=[E("tec", "rev_c_date", "Table", ["Table 0-1"])]),
    dict(k="tec_docno", doc="tec", t="reference_chain", d="hard", f="Str", r="casefold_exact_match",
         q="What document number is printed in the page footers of the manual (without the revision)?",
         a="KTS-IOM-HX400-EN", wrong=["KTS-IOM-HX400-DE", "HX-400"], alts=["KTS-IOM-HX400-EN Rev. D"],
         ev=[E("tec", "footer_docno", "Layout", ["page footer"])]),
    dict(k="tec_na_480", doc="tec", t="unanswerable", d="hard", f="None", r="exact_match",
         q="What is the maximum operating temperature of the HX-480?",
         a=NA, wrong=["200 C", "180 C"], ev=[]),
    dict(k="tec_warranty", doc="tec", t="temporal", d="very_hard", f="Int", r="numeric_tolerance",
         q="A unit is commissioned 8 months after delivery. How many months after delivery does its warranty "
           "expire?",
         a="30", unit="months", wrong=["32", "24"],
         ev=[E("tec", "warranty", "Text", ["Section 9"])]),
    dict(k="tec_plates", doc="tec", t="aggregation", d="hard", f="Int", r="numeric_tolerance",
         q="What is the total number of plates in one unit of each of the four HX-400 models?",
         a="506", unit="plates", wrong=["466", "266"],
         ev=[E("tec", "spec_5_lab", "Table", ["Table 3-1"])]),
    # ------------------------------------------------------------------ scientific_academic
    dict(k="sci_ablation", doc="sci", t="ranking", d="hard", f="Str", r="casefold_exact_match",
         q="Removing which component causes the largest accuracy drop in the ablation study?",
         a="page reranker", wrong=["sparse index", "layout tokens"], alts=["the layout-aware page reranker"],
         ev=[E("sci", "abl_rr", "Table", ["Table 4"])]),
    dict(k="sci_gap20", doc="sci", t="comparison", d="very_hard", f="Str", r="casefold_exact_match",
         q="In Figure 3, in which document-length bucket (in pages) does SPARK's lead over the full-context LLM "
           "first exceed 20 accuracy points?",
         a="200-500", wrong=["500+", "100-200"], alts=["200-500 pages"],
         ev=[E("sci", "fig3", "Chart", ["Figure 3"], bbox=False)]),
    dict(k="sci_protocol", doc="sci", t="reference_chain", d="very_hard", f="Str", r="casefold_exact_match",
         q="What is the surname of the first author of the work whose evaluation protocol the paper follows?",
         a="Sato", wrong=["Rivera", "Larsen"],
         ev=[E("sci", "cite17", "Text", ["Section 4"]), E("sci", "ref17", "Text", ["References"])]),
    dict(k="sci_colpali", doc="sci", t="comparison", d="hard", f="Str", r="casefold_exact_match",
         q="On which benchmarks does ColPali-R outperform DensePage?",
         a="LongDocQA and LegalLens", wrong=["LongDocQA", "FinPages"], swap="LegalLens and LongDocQA",
         ev=[E("sci", "t2_3_0", "Table", ["Table 2"]), E("sci", "t2_3_2", "Table", ["Table 2"])]),
    dict(k="sci_questions", doc="sci", t="aggregation", d="hard", f="Int", r="numeric_tolerance",
         q="How many questions do the three benchmarks contain in total?",
         a="7710", unit="questions", wrong=["2104", "3870"], fmt_thousands="7,710",
         ev=[E("sci", "t1_long", "Table", ["Table 1"]), E("sci", "t1_legal", "Table", ["Table 1"])]),
    dict(k="sci_rel_gain", doc="sci", t="comparison", d="very_hard", f="Float", r="percentage_exact",
         q="What is SPARK's relative improvement over BM25-RAG in accuracy on FinPages, in percent?",
         a="12.9%", wrong=["5.8%", "11.4%"],
         ev=[E("sci", "t2_1_1", "Table", ["Table 2"]), E("sci", "t2_4_1", "Table", ["Table 2"])]),
    dict(k="sci_na_gpu", doc="sci", t="unanswerable", d="hard", f="None", r="exact_match",
         q="Which GPU model was used to train the SPARK reranker?",
         a=NA, wrong=["NVIDIA A100", "8x H100"], ev=[]),
    dict(k="sci_before_reader", doc="sci", t="reference_chain", d="hard", f="Str", r="casefold_exact_match",
         q="In the pipeline overview (Figure 1), which component comes directly before the reader LLM?",
         a="Layout-aware reranker", wrong=["Sparse page index", "Query rewriter"], near="layout aware reranker",
         ev=[E("sci", "fig1", "Figure", ["Figure 1"])]),
    # ------------------------------------------------------------------ narrative_literature
    dict(k="nar_days", doc="nar", t="temporal", d="hard", f="Int", r="numeric_tolerance",
         q="How many days passed between Thomas's arrival at Carrow Point and his departure?",
         a="26", unit="days", wrong=["29", "14"],
         ev=[E("nar", "arrive", "Text", ["Chapter One"]), E("nar", "leave", "Text", ["Chapter Four"])]),
    dict(k="nar_lost", doc="nar", t="aggregation", d="hard", f="Int", r="numeric_tolerance",
         q="How many of the men aboard the Clara Vane were not rescued?",
         a="2", unit="", wrong=["5", "7"],
         ev=[E("nar", "crew", "Text", ["Chapter Three"])]),
    dict(k="nar_dog", doc="nar", t="reference_chain", d="very_hard", f="Str", r="casefold_exact_match",
         q="What was the name of the dog belonging to the man who signed the log entry of 17th November?",
         a="Bosun", wrong=["Merrow", "Quayle"], near="Boson",
         ev=[E("nar", "log", "Text", ["Chapter Four"]), E("nar", "dog", "Text", ["Chapter One"])]),
    dict(k="nar_na_wife", doc="nar", t="unanswerable", d="hard", f="None", r="exact_match",
         q="What was the name of Abel Quayle's wife?",
         a=NA, wrong=["Alice", "Martha Quayle"], ev=[]),
    dict(k="nar_lamp", doc="nar", t="reference_chain", d="hard", f="Str", r="choice_exact_match",
         q="Why was the lamp out for forty minutes on 17th November? A) The paraffin had run out "
           "B) The mantle had cracked C) A pane of the lantern broke D) The keeper fell asleep",
         a="A", wrong=["B", "D"],
         ev=[E("nar", "log", "Text", ["Chapter Four"])]),
    dict(k="nar_ch3_page", doc="nar", t="reference_chain", d="hard", f="Int", r="numeric_tolerance",
         q="On which page of the PDF does Chapter Three begin?",
         a=lambda c: str(c["nar"]["ch_three"]["page"]), unit="", wrong=["12", "15"],
         ev=[E("nar", "ch_three", "Layout", ["Chapter Three"])]),
    # the manual's scanned test certificate (an image-only page: found only by OCR); last of the
    # single-document questions, so that no other question's id changes
    dict(k="tec_cert_test", doc="tec", t="reference_chain", d="hard", f="Float", r="numeric_tolerance",
         q="According to the works test certificate bound into the HX-400 manual, at what pressure did the "
           "unit pass its hydrostatic test, in bar?",
         a="24.5", unit="bar", wrong=["16", "17.6", "25.4"],
         ev=[E("tec", "cert_test", "Text", ["Works Test Certificate"])]),
    # ------------------------------------------------------------------ cross-document
    dict(k="x_models_ok", docs=["tec", "leg", "fin"], t="compliance", d="very_hard", f="Str", r="casefold_exact_match",
         q="Which HX-400 models can be installed on an inland waterway vessel without breaching the pressure "
           "limit for heat exchangers in Article 31(2) of Regulation (RX) 2023/117?",
         a="HX-410 and HX-420", wrong=["HX-410", "HX-410, HX-420 and HX-440"], swap="HX-420 and HX-410",
         ev=[E("tec", "spec_0_lab", "Table", ["Table 3-1"]), E("leg", "art31_16", "Text", ["Article 31"])]),
    dict(k="x_weight", docs=["fin", "tec"], t="aggregation", d="very_hard", f="Int", r="numeric_tolerance",
         q="What is the combined dry weight, in kg, of the heat exchangers Northwind took delivery of for the "
           "Eastport reefer stack in 2023?",
         a="8160", unit="kg", wrong=["340", "21840"], fmt_thousands="8,160",
         ev=[E("fin", "chair_hx", "Text"), E("tec", "spec_6_HX-420", "Table", ["Table 3-1"])]),
    dict(k="x_fine", docs=["leg", "fin", "tec"], t="counterfactual", d="very_hard", f="Float", r="numeric_tolerance",
         q="Article 58(2) of Regulation (RX) 2023/117 sets a maximum fine of at least 4% of annual worldwide "
           "turnover or EUR 2 000 000, whichever is higher. Using Northwind's 2023 revenue, what is that amount "
           "in EUR million?",
         a="56.5", unit="EUR million", wrong=["2", "52.1"],
         ev=[E("leg", "art58", "Text", ["Article 58"]), E("fin", "inc_rev", "Table", ["Table 7"])]),
    dict(k="x_ptest", docs=["tec", "leg"], t="compliance", d="hard", f="Str", r="casefold_exact_match",
         q="Does the hydrostatic pressure test interval in the HX-400 maintenance schedule meet the maximum "
           "inspection interval for pressure equipment in Annex III of Regulation (RX) 2023/117? Answer Yes or No.",
         a="Yes", wrong=["No"],
         ev=[E("tec", "mnt_ptest", "Table", ["Table 7-1"]), E("leg", "ann3_A", "Table", ["Annex III"])]),
    dict(k="x_first", docs=["fin", "leg", "tec"], t="temporal", d="very_hard", f="Str", r="choice_exact_match",
         q="Which of these documents was published first? A) Regulation (RX) 2023/117 in the Official Journal "
           "B) Northwind Harbour Group's Annual Report and Accounts 2023 C) they were all published in the same "
           "month D) Revision D of the HX-400 manual",
         a="D", wrong=["A", "B"],
         ev=[E("fin", "pub", "Layout", ["cover"]), E("leg", "oj_date", "Layout", ["cover"]),
             E("tec", "cover_rev", "Layout", ["cover"])]),
    dict(k="x_case_n", docs=["sci", "med"], t="reconciliation", d="very_hard", f="Int", r="numeric_tolerance",
         q="The SPARK paper's case study reports a planned sample size for protocol VLX-301. By how many "
           "participants does it differ from the planned sample size in the protocol version provided?",
         a="72", unit="participants", wrong=["0", "540"],
         ev=[E("sci", "case540", "Text", ["Section 6"]), E("med", "syn_n", "Table", ["Table 2"])]),
    dict(k="x_na_fees", docs=["fin", "leg"], t="unanswerable", d="hard", f="None", r="exact_match",
         q="How much did Northwind pay in certificate renewal fees under Annex IV of Regulation (RX) 2023/117 "
           "in 2023?",
         a=NA, wrong=["EUR 1,150", "EUR 27,600"], ev=[]),
    dict(k="x_days_agm", docs=["fin", "leg"], t="temporal", d="very_hard", f="Int", r="numeric_tolerance",
         q="How many days after Northwind's 2024 Annual General Meeting do Articles 45 and 58 of Regulation "
           "(RX) 2023/117 start to apply?",
         a=str((date(2026, 1, 1) - date(2024, 5, 14)).days), unit="days",
         wrong=[str((date(2025, 7, 1) - date(2024, 5, 14)).days), "232"],
         ev=[E("fin", "agm", "Text", ["Shareholder information"]), E("leg", "art72_late", "Text", ["Article 72"])]),
]

SOURCE_ORDER = ["Text", "Table", "Chart", "Figure", "Layout"]


def build_gold(ctx, docs_meta):
    """ctx: {doc key: anchors}; docs_meta: {doc key: documents.jsonl record + coarse}.
    Returns (single records, cross records, hints by question_id)."""
    single, cross, hints = [], [], {}
    ns = nc = 0
    for q in QUESTIONS:
        keys = q.get("docs") or [q["doc"]]
        is_cross = "docs" in q
        if is_cross:
            nc += 1
            qid = f"adubench_cross_{nc:06d}"
        else:
            ns += 1
            qid = f"adubench_single_{ns:06d}"
        value = q["a"](ctx) if callable(q["a"]) else q["a"]
        doc_objs = []
        pages_by_doc = {}
        for dk in keys:
            items = []
            for ev in q["ev"]:
                if ev["doc"] != dk:
                    continue
                a = ctx[dk][ev["anchor"]]
                item = {"locator": f"Page {a['page']}", "pages": [a["page"]], "quote": a["quote"],
                        "source_type": ev["src"], "evidence_kind": "supporting_excerpt",
                        "page_numbering": "annotator_supplied", "mentioned_elements": ev["elems"]}
                if ev["src"] in ("Chart", "Figure") and ev["bbox"] and a.get("bbox"):
                    item["bbox"] = a["bbox"]
                items.append(item)
            pages = sorted({it["pages"][0] for it in items})
            pages_by_doc[dk] = pages
            m = docs_meta[dk]
            doc_objs.append({"document_id": m["document_id"], "url": m["url"], "evidence_pages": pages,
                             "evidence_page_numbering": "pdf_index", "evidence_items": items})
        sources = [s for s in SOURCE_ORDER if any(ev["src"] == s for ev in q["ev"])]
        unans = q["f"] == "None"
        types = {docs_meta[k]["doc_type"] for k in keys}
        coarse = {docs_meta[k]["coarse"] for k in keys}
        rec = {
            "question_id": qid,
            "task_type": "cross_doc" if is_cross else "single_doc",
            "question": q["q"],
            "answer": {"value": value, "format": q["f"], "verification_rule": q["r"]},
        }
        if is_cross:
            rec["documents"] = doc_objs
        else:
            rec["document"] = doc_objs[0]
        rec["metadata"] = {
            "domain": docs_meta[keys[0]]["domain"],
            "difficulty": q["d"],
            "reasoning_type": q["t"],
            "doc_type": types.pop() if len(types) == 1 else "mixed",
            "doc_type_coarse": coarse.pop() if len(coarse) == 1 else "mixed",
            "evidence_sources": sources,
            "evidence_annotation_status": "not_answerable" if unans else "has_evidence",
            "is_unanswerable": unans,
            "n_context_documents": len(keys),
            "n_evidence_documents": sum(1 for d in doc_objs if d["evidence_items"]),
        }
        (cross if is_cross else single).append(rec)
        hints[qid] = {"key": q["k"], "value": value, "format": q["f"], "rule": q["r"], "sources": sources,
                      "difficulty": q["d"], "wrong": q.get("wrong", []), "unit": q.get("unit", ""),
                      "alts": q.get("alts", []), "swap": q.get("swap"), "near": q.get("near"),
                      "sci": q.get("sci"), "thousands": q.get("fmt_thousands"),
                      "doc_ids": [docs_meta[k]["document_id"] for k in keys],
                      "pages": pages_by_doc[keys[0]], "page_counts": [docs_meta[k]["page_count"] for k in keys],
                      "bbox": next((ctx[e["doc"]][e["anchor"]].get("bbox") for e in q["ev"]
                                    if e["doc"] == keys[0] and e["src"] in ("Chart", "Figure")
                                    and ctx[e["doc"]][e["anchor"]].get("bbox")), None)}
    return single, cross, hints
