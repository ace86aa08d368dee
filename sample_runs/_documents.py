"""The six sample documents. Each build_* function writes one PDF and returns the anchors
(where the facts that the gold questions cite were placed) plus the page count."""

from __future__ import annotations

import os
import re

from _layout import BLACK, FILL, GREY, LIGHT, Builder, text_width, wrap
from _prose import Prose


def fill(b: Builder, prose: Prose, until_page: int, heads=None, every=3, size=None, font=None,
         reserve=0.0, end_break=True):
    """Add filler paragraphs until page `until_page` is (nearly) full, then start a new page.
    reserve: leave this much vertical space free on the last page (end_break=False to use it)."""
    size = size or b.body_size
    font = font or b.body_font
    lh = size * b.lead
    n = 0
    hi = 0
    while b.pno <= until_page:
        last_area = b.columns == 1 or b.col == 1
        on_last = b.pno == until_page and last_area
        if heads and n and n % every == 0:
            if on_last and b.y > b.bottom - 110:
                break
            b.heading(heads[hi % len(heads)], level=3, toc=False)
            hi += 1
        text = prose.paragraph()
        if on_last:
            room = int((b.bottom - reserve - b.y) / lh) - 1
            if room < 2:
                break
            if len(wrap(text, b.cw, font, size)) > room:
                sents = [s if s.endswith(".") else s + "." for s in text.split(". ")]
                keep = ""
                for s in sents:
                    trial = (keep + " " + s).strip()
                    if len(wrap(trial, b.cw, font, size)) > room:
                        break
                    keep = trial
                if keep:
                    b.para(keep)
                break
        b.para(text)
        n += 1
    if end_break:
        b.page_break()


def add_paras(b, prose, n):
    for _ in range(n):
        b.para(prose.paragraph())


# ====================================================================================
# 1. finance_business: annual report
# ====================================================================================
FIN_SEGMENTS = [
    ("Container Terminals", 498.2, 541.7, 92.4),
    ("Freight Forwarding", 402.5, 377.9, 18.6),
    ("Warehousing", 187.4, 221.3, 37.9),
    ("Inland Rail", 132.0, 158.6, 21.7),
    ("Marine Services", 83.0, 113.1, 16.7),
]
FIN_REGIONS = [("Netherlands", 3301, 3412), ("Germany", 2215, 2108), ("Poland", 1402, 1655),
               ("Sweden", 986, 1020), ("United Kingdom", 1011, 968), ("Other", 655, 677)]
FIN_EMISSIONS = [("2019", 412), ("2020", 388), ("2021", 371), ("2022", 344), ("2023", 301)]
FIN_BOARD = [
    ("Margaret Okonkwo", "Chair", "12 May 2017", "8/8"),
    ("Pieter van Dijk", "Chief Executive", "1 September 2019", "8/8"),
    ("Sofia Lindqvist", "Chief Financial Officer", "3 January 2022", "8/8"),
    ("Tomasz Wierzbicki", "Senior Independent Director", "14 May 2018", "7/8"),
    ("Rahul Menon", "Independent Non-executive Director", "20 June 2020", "6/8"),
    ("Claire Dubois", "Independent Non-executive Director", "15 November 2021", "8/8"),
    ("Hannah Achterberg", "Independent Non-executive Director", "1 March 2023", "6/6"),
]
FIN_FIVE = [  # label, 2019..2023
    ("Revenue", ["1,188.4", "1,097.9", "1,226.0", "1,303.1", "1,412.6"]),
    ("Operating profit", ["151.0", "118.2", "160.4", "171.9", "187.3"]),
    ("Operating margin (%)", ["12.7", "10.8", "13.1", "13.2", "13.3"]),
    ("Profit before tax", ["138.5", "97.6", "141.0", "146.2", "156.1"]),
    ("Profit for the year", ["104.9", "72.3", "107.5", "110.1", "118.6"]),
    ("Basic earnings per share (cents)", ["36.4", "25.1", "37.3", "38.2", "41.2"]),
    ("Capital expenditure", ["96.3", "71.5", "102.8", "118.4", "141.0"]),
    ("Net debt", ["402.0", "455.7", "430.1", "398.6", "476.2"]),
    ("Dividend per share (cents)", ["19.0", "12.0", "20.0", "22.0", "24.5"]),
    ("Employees at year end", ["8,990", "8,720", "9,105", "9,570", "9,840"]),
    ("Containers handled (thousand TEU)", ["4,120", "3,860", "4,310", "4,480", "4,905"]),
    ("Warehouse space (thousand m2)", ["910", "935", "1,020", "1,160", "1,402"]),
]


def build_finance(path):
    foot = "Northwind Harbour Group plc  |  Annual Report and Accounts 2023"
    b = Builder(body_font="helv", body_size=9.5, footer=lambda i, n: (foot, str(i)),
                heading_color=(0.05, 0.22, 0.42))
    b.no_chrome = {1}
    pr = Prose("finance", 101)
    heads = ["Performance in the year", "Our priorities", "Customers and markets", "Operational review",
             "Investment and capital allocation", "Outlook", "Engaging with stakeholders"]
    # --- p1 cover
    b.rect((0, 0, b.W, 300), color=None, fill=(0.05, 0.22, 0.42), width=0)
    b.text(64, 190, "Northwind Harbour Group plc", "hebo", 28, (1, 1, 1))
    b.text(64, 228, "Annual Report and Accounts 2023", "helv", 18, (1, 1, 1))
    b.text(64, 256, "Connecting ports, rail and warehouses across Northern Europe", "heit", 11, (1, 1, 1))
    for k, (name, *_r) in enumerate(FIN_SEGMENTS):
        b.rect((64 + k * 94, 360, 64 + k * 94 + 84, 420), color=None, fill=FILL, width=0)
        b.text_center(64 + k * 94 + 42, 394, name if len(name) < 15 else name.split()[0], "hebo", 8)
    b.text(64, 760, "Published 21 March 2024", "helv", 10)
    b.anchor("pub", "Published 21 March 2024")
    b.text(64, 776, "Registered in England and Wales, company number 04418273", "helv", 8, GREY)
    b.new_page()
    # --- p2 contents (entries written at save time)
    b.heading("Contents", 1, toc=False)
    b.new_page()
    # --- p3 highlights
    b.heading("2023 at a glance", 1)
    kpis = [("EUR 1,412.6m", "Revenue", "+8.4% on 2022", "hl_rev"),
            ("EUR 187.3m", "Operating profit", "2022: EUR 171.9m", "hl_op"),
            ("24.5 cents", "Total dividend per share", "2022: 22.0 cents", "hl_div"),
            ("9,840", "Employees at year end", "2022: 9,570", "hl_emp"),
            ("EUR 476.2m", "Net debt", "2022: EUR 398.6m", "hl_debt"),
            ("301 kt", "Scope 1 and 2 emissions (CO2e)", "2022: 344 kt", "hl_co2")]
    y0 = b.y + 6
    for k, (val, lab, sub, key) in enumerate(kpis):
        x = 64 + (k % 3) * 158
        y = y0 + (k // 3) * 100
        b.rect((x, y, x + 146, y + 88), color=(0.05, 0.22, 0.42), fill=FILL, width=0.8)
        b.text(x + 10, y + 30, val, "hebo", 17, (0.05, 0.22, 0.42))
        b.text(x + 10, y + 52, lab, "helv", 8.5)
        b.text(x + 10, y + 70, sub, "heit", 8, GREY)
        b.anchor(key, val)
    b.y = y0 + 210
    b.para("The figures on this page are taken from the consolidated financial statements and the "
           "five-year summary. Operating profit is stated before exceptional items; there were no "
           "exceptional items in 2023 or 2022.")
    fill(b, pr, 3)
    # --- p4-5 chair
    b.heading("Chair's statement", 1)
    b.para("Dear shareholder,")
    b.para("2023 was a year of disciplined growth for Northwind Harbour Group. Group revenue rose 8.4% to "
           "EUR 1,412.6 million, driven by higher volumes at our container terminals and a first full year "
           "of the expanded Warehousing network, while Freight Forwarding faced lower rates as ocean "
           "freight markets normalised.",
           marks={"chair_rev": "revenue rose 8.4% to EUR 1,412.6 million"})
    b.para("Reflecting our confidence in the Group's prospects, the Board recommends a final dividend of "
           "16.0 cents per share, bringing the total dividend for the year to 24.5 cents (2022: 22.0 cents).",
           marks={"chair_div": "to 24.5 cents (2022: 22.0 cents)"})
    add_paras(b, pr, 2)
    b.para("In the second half of the year we took delivery of 24 HX-420 plate heat exchangers for the new "
           "reefer stack at Eastport, part of a wider programme to reduce the energy used in handling "
           "refrigerated containers.", marks={"chair_hx": "24 HX-420 plate heat exchangers"})
    fill(b, pr, 5, heads=heads, reserve=50, end_break=False)
    b.para("Margaret Okonkwo", font="hebo", after=1)
    b.para("Chair")
    b.page_break()
    # --- p6-9 CEO review, two columns
    b.heading("Chief Executive's review", 1)
    b.begin_columns()
    b.heading("A year of delivery", 2, toc=False)
    add_paras(b, pr, 2)
    b.para("On 3 July 2023 we completed the acquisition of Baltic Reach Logistics for EUR 96.0 million, "
           "adding eleven warehouses in Poland and Lithuania to our network.",
           marks={"ceo_acq": "acquisition of Baltic Reach Logistics"})
    add_paras(b, pr, 3)
    b.heading("Eastport", 2, toc=False)
    b.para("The Eastport terminal expansion opened on 18 October 2023, adding a fourth berth and "
           "420,000 TEU of annual capacity ahead of the winter peak.",
           marks={"ceo_eastport": "expansion opened on 18 October 2023"})
    add_paras(b, pr, 4)
    b.heading("Regulation", 2, toc=False)
    b.para("Our Inland Rail and Marine Services segments operate vessels and transfer terminals that fall "
           "within the scope of Regulation (RX) 2023/117 on the safety of inland waterway vessels. We "
           "have started a programme to prepare our fleet for the new inspection regime.",
           marks={"ceo_reg": "Regulation (RX) 2023/117"})
    fill(b, pr, 9, heads=heads)
    b.end_columns()
    # --- p10-14 segment review
    b.heading("Segment review", 1)
    b.para("The Group reports five operating segments. Table 2 sets out revenue by segment; Figure 3 "
           "shows the operating profit of each segment for 2023. Segment operating profit is measured "
           "on the same basis as Group operating profit in the income statement.")
    rows = []
    for name, a, c, _op in FIN_SEGMENTS:
        rows.append([name, f"{a:,.1f}", f"{c:,.1f}", f"{(c / a - 1) * 100:+.1f}%"])
    ta = sum(s[1] for s in FIN_SEGMENTS)
    tc = sum(s[2] for s in FIN_SEGMENTS)
    rows.append(["Total", f"{ta:,.1f}", f"{tc:,.1f}", f"{(tc / ta - 1) * 100:+.1f}%"])
    anchors = {}
    for i, (name, *_r) in enumerate(FIN_SEGMENTS):
        anchors[f"seg22_{i}"] = (i, 1)
        anchors[f"seg23_{i}"] = (i, 2)
    anchors["seg_total23"] = (5, 2)
    anchors["seg_total22"] = (5, 1)
    b.table("Table 2: Revenue by segment (EUR million)", ["Segment", "2022", "2023", "Change"], rows,
            [0.46, 0.18, 0.18, 0.18], anchors=anchors, caption_anchor="seg_table", bold_rows=(5,),
            size=9, grid=True)
    add_paras(b, pr, 2)
    b.ensure(260)
    b.bar_chart("Figure 3: Operating profit by segment, 2023 (EUR million)",
                [s[0] for s in FIN_SEGMENTS], [s[3] for s in FIN_SEGMENTS], key="fig3",
                ylabel="EUR million", ymax=100, ystep=20, height=220)
    add_paras(b, pr, 1)
    fill(b, pr, 14, heads=["Container Terminals", "Freight Forwarding", "Warehousing", "Inland Rail",
                           "Marine Services"], every=2)
    # --- p15-17 people
    b.heading("Our people", 1)
    add_paras(b, pr, 2)
    rows = [[r, f"{a:,}", f"{c:,}"] for r, a, c in FIN_REGIONS]
    rows.append(["Total", f"{sum(r[1] for r in FIN_REGIONS):,}", f"{sum(r[2] for r in FIN_REGIONS):,}"])
    anchors = {f"emp_{i}": (i, 2) for i in range(len(FIN_REGIONS))}
    anchors.update({f"emp22_{i}": (i, 1) for i in range(len(FIN_REGIONS))})
    b.table("Table 4: Employees by region at 31 December", ["Region", "2022", "2023"], rows,
            [0.5, 0.25, 0.25], anchors=anchors, caption_anchor="emp_table", bold_rows=(len(rows) - 1,),
            size=9, grid=False)
    fill(b, pr, 17, heads=heads)
    # --- p18-22 sustainability
    b.heading("Sustainability", 1)
    b.para("We have committed to reduce our Scope 1 and 2 emissions by 42% against the 2019 baseline by 2030. "
           "Progress is shown in Figure 5. The main levers are the electrification of yard equipment, "
           "shore power at our terminals and the renewal of the locomotive fleet.",
           marks={"co2_target": "by 42% against the 2019 baseline by 2030"})
    add_paras(b, pr, 2)
    b.bar_chart("Figure 5: Scope 1 and 2 emissions, 2019-2023 (kt CO2e)",
                [y for y, _ in FIN_EMISSIONS], [v for _, v in FIN_EMISSIONS], key="fig5",
                ylabel="kt CO2e", ymax=450, ystep=50, height=210, fmt="{:.0f}",
                color=(0.15, 0.5, 0.35), xlabel="Financial year")
    fill(b, pr, 22, heads=heads)
    # --- p23-29 risk (two columns)
    b.heading("Principal risks and uncertainties", 1)
    b.begin_columns()
    add_paras(b, pr, 3)
    b.table("Table 5: Principal risks", ["Risk", "Trend", "Owner"],
            [["Cyber security", "Increasing", "CFO"], ["Trade volumes", "Stable", "CEO"],
             ["Health and safety", "Stable", "COO"], ["Regulatory change", "Increasing", "General Counsel"],
             ["Labour relations", "Decreasing", "HR Director"], ["Climate transition", "Increasing", "COO"]],
            [0.46, 0.27, 0.27], align=["l", "l", "l"], size=8)
    fill(b, pr, 29, heads=heads)
    b.end_columns()
    # --- p30-34 governance
    b.heading("Governance report", 1, anchor="gov_head")
    add_paras(b, pr, 2)
    rows = [list(r) for r in FIN_BOARD]
    anchors = {f"board_{i}": (i, 0) for i in range(len(rows))}
    anchors.update({f"board_app_{i}": (i, 2) for i in range(len(rows))})
    anchors.update({f"board_att_{i}": (i, 3) for i in range(len(rows))})
    b.table("Table 6: Board of Directors and attendance at scheduled Board meetings in 2023",
            ["Director", "Role", "Appointed", "Attended"], rows, [0.27, 0.38, 0.21, 0.14],
            align=["l", "l", "l", "r"], anchors=anchors, caption_anchor="board_table", size=8.5)
    b.para("Hannah Achterberg joined the Board part-way through the year and was eligible to attend six "
           "scheduled meetings. Attendance is shown as meetings attended out of meetings eligible to attend.",
           size=8.5)
    fill(b, pr, 34, heads=heads)
    # --- p35-41 financial statements
    b.heading("Consolidated income statement", 1)
    b.para("For the year ended 31 December 2023", font="heit",
           marks={"ye": "For the year ended 31 December 2023"})
    inc = [["Revenue", "2", "1,412.6", "1,303.1"], ["Cost of sales", "", "(1,036.8)", "(961.4)"],
           ["Gross profit", "", "375.8", "341.7"], ["Administrative expenses", "", "(204.0)", "(182.1)"],
           ["Other operating income", "4", "15.5", "12.3"], ["Operating profit", "3", "187.3", "171.9"],
           ["Finance costs", "6", "(31.2)", "(25.7)"], ["Profit before tax", "", "156.1", "146.2"],
           ["Income tax expense", "7", "(37.5)", "(36.1)"], ["Profit for the year", "", "118.6", "110.1"]]
    b.table("Table 7: Consolidated income statement (EUR million)", ["", "Note", "2023", "2022"], inc,
            [0.52, 0.12, 0.18, 0.18], align=["l", "c", "r", "r"], bold_rows=(2, 5, 7, 9),
            anchors={"inc_rev": (0, 2), "inc_op": (5, 2), "inc_pbt": (7, 2), "inc_tax": (8, 2),
                     "inc_profit": (9, 2)}, caption_anchor="inc_table", size=9)
    add_paras(b, pr, 2)
    b.heading("Note 9: Earnings per share", 2, toc=False)
    b.para("Basic earnings per share is calculated by dividing the profit for the year attributable to "
           "shareholders by the weighted average number of ordinary shares in issue during the year, "
           "which was 287.9 million (2022: 288.2 million). Basic earnings per share was 41.2 cents.",
           marks={"eps": "287.9 million (2022: 288.2 million)"})
    fill(b, pr, 41, heads=["Basis of preparation", "Revenue recognition", "Leases", "Taxation",
                           "Financial instruments", "Going concern"], every=2)
    # --- p42-44 five-year summary; the table continues onto the next page
    b.heading("Five-year summary", 1)
    add_paras(b, pr, 7)
    rows = [[lab] + vals for lab, vals in FIN_FIVE]
    anchors = {}
    for i, (lab, vals) in enumerate(FIN_FIVE):
        anchors[f"five_{i}_lab"] = (i, 0)
        for j in range(5):
            anchors[f"five_{i}_{2019 + j}"] = (i, j + 1)
    b.table("Table 9: Five-year summary (EUR million unless stated)",
            ["", "2019", "2020", "2021", "2022", "2023"], rows, [0.35, 0.13, 0.13, 0.13, 0.13, 0.13],
            anchors=anchors, caption_anchor="five_table", split_at=7, size=9, grid=True)
    add_paras(b, pr, 2)
    fill(b, pr, 44)
    # --- p45-46 shareholder information
    b.heading("Shareholder information", 1)
    b.para("The Annual General Meeting will be held at 10:00 on 14 May 2024 at the Eastport Conference "
           "Centre. The notice of meeting is sent to shareholders separately.",
           marks={"agm": "10:00 on 14 May 2024"})
    b.bullets(["Ex-dividend date for the final dividend: 25 April 2024",
               "Record date: 26 April 2024",
               "Final dividend payment date: 7 June 2024"], marks={"divpay": "7 June 2024"})
    add_paras(b, pr, 3)
    b.heading("Glossary", 2, toc=False)
    for term, d in [("TEU", "twenty-foot equivalent unit, the standard measure of container volume"),
                    ("Operating margin", "operating profit divided by revenue"),
                    ("Net debt", "borrowings and lease liabilities less cash and cash equivalents"),
                    ("Reefer", "a refrigerated container"),
                    ("Scope 1 and 2", "direct emissions and emissions from purchased energy")]:
        b.para(f"{term}: {d}.", size=9)
    fill(b, pr, 46)
    # pages now: last page empty? remove trailing empty page (page_break opened one)
    _drop_trailing(b)

    def toc(bb):
        sh = bb.pages[1]
        y = 150
        for level, title, p in bb.toc:
            if level != 1:
                continue
            sh.insert_text((80, y), title, fontname="helv", fontsize=11)
            w = text_width(str(p), "helv", 11)
            sh.insert_text((515 - w, y), str(p), fontname="hebo", fontsize=11)
            sh.draw_line((80 + text_width(title, "helv", 11) + 6, y), (515 - w - 6, y))
            sh.finish(color=LIGHT, width=0.5, dashes="[1 2] 0")
            if title == "Governance report":
                bb.anchor("toc_gov", "Governance report", page=2)
            y += 24

    n = b.save(path, {"title": "Northwind Harbour Group plc - Annual Report and Accounts 2023",
                      "author": "Northwind Harbour Group plc"}, before_commit=toc)
    return b.anchors, n, b.toc


def _drop_trailing(b: Builder):
    """fill() leaves a fresh empty page at the end; remove it."""
    if b.y <= b.mt + 1 and b.col == 0:
        b.pages.pop()


# ====================================================================================
# 2. medical_clinical: clinical trial protocol
# ====================================================================================
MED_VISITS = ["V1 Wk -4", "V2 Wk 0", "V3 Wk 4", "V4 Wk 8", "V5 Wk 12", "V6 Wk 24", "V7 Wk 36",
              "V8 Wk 52", "V9 Wk 56"]
MED_SOA = [  # assessment, visits (1-based) where performed
    ("Informed consent", [1]), ("Demographics", [1]), ("Medical history", [1]),
    ("Physical examination", [1, 2, 5, 8, 9]), ("Vital signs", [1, 2, 3, 4, 5, 6, 7, 8, 9]),
    ("12-lead ECG", [1, 2, 5, 8]), ("Haematology and chemistry", [1, 2, 3, 5, 6, 8]),
    ("Pregnancy test", [1, 2, 5, 8]), ("Headache diary review", [2, 3, 4, 5, 6, 7, 8]),
    ("MIDAS questionnaire", [2, 5, 8]), ("PK blood sample", [2, 3, 5]),
    ("Biomarker sample (exploratory)", [2, 5]), ("Dispense study drug", [2, 3, 4, 5, 6, 7]),
    ("Adverse events", [2, 3, 4, 5, 6, 7, 8, 9]), ("Concomitant medications", [1, 2, 3, 4, 5, 6, 7, 8, 9]),
]
MED_ENROL = [18, 46, 88, 140, 198, 256, 310, 362, 418, 470, 522, 566, 598, 612]
MED_COUNTRIES = [("Germany", "9", "Version 1.0"), ("Netherlands", "5", "Version 1.0"),
                 ("Spain", "7", "Version 1.0"), ("Italy", "6", "Version 2.0"),
                 ("Poland", "4", "Version 3.0"), ("Czech Republic", "3", "Version 3.0")]


def build_medical(path):
    b = Builder(body_font="helv", body_size=9.5,
                header=lambda i, n: ("Halden Therapeutics AB  -  Protocol VLX-301", "Version 3.0  |  Confidential"),
                footer=lambda i, n: ("VLX-301 Clinical Study Protocol, 9 February 2023", f"Page {i} of {n}"),
                heading_color=(0.35, 0.1, 0.25))
    b.no_chrome = {1}
    pr = Prose("medical", 202)
    heads = ["Responsibilities", "Documentation", "Training", "Monitoring", "Records", "Quality control"]
    # p1 title
    b.text(64, 130, "CLINICAL STUDY PROTOCOL", "hebo", 12, GREY)
    b.text(64, 170, "VLX-301", "hebo", 30, (0.35, 0.1, 0.25))
    y = 210
    for ln in wrap("A Phase III, Randomised, Double-Blind, Placebo-Controlled Study of the Efficacy and "
                   "Safety of Velorexant for the Preventive Treatment of Chronic Migraine in Adults",
                   460, "hebo", 15):
        b.text(64, y, ln, "hebo", 15)
        y += 20
    for k, (lab, val) in enumerate([("Investigational product", "Velorexant 75 mg tablets"),
                                    ("Sponsor", "Halden Therapeutics AB, Uppsala, Sweden"),
                                    ("EU CT number", "2021-500417-22-00"),
                                    ("Protocol version", "Version 3.0 (Amendment 2)"),
                                    ("Date", "9 February 2023")]):
        b.text(64, 340 + k * 22, lab, "hebo", 10)
        b.text(220, 340 + k * 22, val, "helv", 10)
    b.anchor("title_date", "9 February 2023")
    b.text(64, 760, "This document contains confidential information belonging to Halden Therapeutics AB.",
           "heit", 8, GREY)
    b.new_page()
    # p2 document history
    b.heading("Document history", 1)
    b.table("Table 1: Protocol versions", ["Version", "Date", "Summary of changes", "Planned N"],
            [["1.0", "14 June 2021", "Original protocol", "540"],
             ["2.0", "22 March 2022", "Amendment 1: exploratory biomarker sampling added; screening "
                                      "period extended from 21 to 28 days; sites added in Italy", "540"],
             ["3.0", "9 February 2023", "Amendment 2: planned sample size increased; sites added in "
                                        "Poland and the Czech Republic", "612"]],
            [0.11, 0.19, 0.56, 0.14], align=["l", "l", "l", "r"], grid=True, size=9,
            anchors={"hist_v1": (0, 1), "hist_v3": (2, 1), "hist_n2": (1, 3), "hist_n3": (2, 3)},
            caption_anchor="hist_table")
    b.para("Amendment 2 was made because the blinded pooled variance of the primary endpoint was higher "
           "than assumed in the original sample size calculation.")
    b.para("Sites in Poland and the Czech Republic were added under Amendment 2.",
           marks={"hist_sites": "Poland and the Czech Republic"})
    fill(b, pr, 2)
    # p3 contacts / signatures
    b.heading("Sponsor signature page", 1)
    add_paras(b, pr, 2)
    for k, (n_, r_) in enumerate([("Dr Ingrid Solberg", "Medical Director"),
                                  ("Dr Marcus Feld", "Head of Biostatistics"),
                                  ("Anna Roos", "Clinical Operations Lead")]):
        b.line((64, b.y + 40), (300, b.y + 40), BLACK, 0.6)
        b.text(64, b.y + 52, f"{n_}, {r_}", "helv", 9)
        b.text(340, b.y + 52, "Date", "helv", 9)
        b.y += 64
    fill(b, pr, 3)
    # p4-5 synopsis
    b.heading("1 Protocol synopsis", 1)
    syn = [["Title", "Velorexant for the preventive treatment of chronic migraine (VLX-301)"],
           ["Phase", "III"],
           ["Design", "Multicentre, randomised, double-blind, placebo-controlled, parallel-group"],
           ["Population", "Adults aged 18 to 65 years with chronic migraine"],
           ["Planned sample size", "612 participants (408 velorexant, 204 placebo)"],
           ["Randomisation", "2:1, stratified by region and prior preventive failure"],
           ["Treatment", "Velorexant 75 mg or placebo orally once daily for 12 weeks"],
           ["Primary endpoint", "Change from baseline in monthly migraine days at Week 12"],
           ["Key secondary endpoints", "50% responder rate; change in MIDAS total score at Week 12"],
           ["Study duration", "Up to 60 weeks per participant including screening and follow-up"]]
    b.table("Table 2: Synopsis", ["Item", "Description"], syn, [0.26, 0.74], align=["l", "l"],
            grid=True, size=9, anchors={"syn_n": (4, 1), "syn_primary": (7, 1), "syn_rand": (5, 1)})
    fill(b, pr, 5, heads=heads)
    # p6-8 background
    b.heading("2 Introduction and rationale", 1)
    fill(b, pr, 8, heads=["Chronic migraine", "Velorexant", "Nonclinical data", "Clinical experience",
                          "Benefit-risk assessment"])
    # p9-10 design + figure 1
    b.heading("3 Study design", 1)
    b.para("The overall design is shown in Figure 1. Eligible participants are randomised in a 2:1 ratio to "
           "velorexant or placebo for a 12-week double-blind treatment period, after which all participants "
           "may enter an open-label extension.")
    _study_schema(b)
    fill(b, pr, 10, heads=heads)
    # p11-13 population
    b.heading("4 Study population", 1)
    b.heading("4.1 Inclusion criteria", 2, toc=False)
    inc = ["1. Aged 18 to 65 years inclusive at the time of signing the informed consent form.",
           "2. Diagnosis of chronic migraine according to ICHD-3 criteria.",
           "3. History of chronic migraine for at least 12 months before screening.",
           "4. At least 15 headache days per month, of which at least 8 are migraine days, during the "
           "baseline period.",
           "5. Headache diary completed on at least 24 of the 28 days of the baseline period.",
           "6. Able to read and understand the diary questions in a local language.",
           "7. Women of childbearing potential agree to use highly effective contraception."]
    for t in inc:
        b.para(t, indent=10, marks={"inc1": "Aged 18 to 65 years inclusive"} if t.startswith("1.") else
               ({"inc4": "At least 15 headache days per month"} if t.startswith("4.") else None))
    b.heading("4.2 Exclusion criteria", 2, toc=False)
    exc = ["1. Medication overuse headache that is not attributable to migraine.",
           "2. Any other primary headache disorder besides migraine and infrequent tension-type headache.",
           "3. Failure of more than three classes of preventive treatment.",
           "4. Clinically significant cardiovascular disease within 12 months before screening.",
           "5. Body mass index of 40 kg/m2 or higher.",
           "6. Hepatic impairment or liver enzymes above twice the upper limit of normal at screening.",
           "7. Use of onabotulinumtoxinA within 4 months before screening.",
           "8. Pregnancy or breastfeeding.",
           "9. Participation in another interventional study within 30 days before screening."]
    for t in exc:
        m = None
        if t.startswith("5."):
            m = {"exc5": "Body mass index of 40 kg/m2 or higher"}
        if t.startswith("7."):
            m = {"exc7": "onabotulinumtoxinA within 4 months"}
        b.para(t, indent=10, marks=m)
    fill(b, pr, 13, heads=heads)
    # p14-17 treatments
    b.heading("5 Study treatment", 1)
    add_paras(b, pr, 3)
    b.heading("5.4 Hepatic events", 2, toc=False)
    b.para("Treatment interruptions and restarts for hepatic adverse events are handled according to the "
           "dose modification rules in Table 5 (Section 5.7).",
           marks={"hep_ref": "dose modification rules in Table 5"})
    fill(b, pr, 15, heads=heads)
    b.heading("5.7 Dose modification", 2, toc=False)
    b.table("Table 5: Dose modification for treatment-related adverse events",
            ["CTCAE grade", "Action with velorexant"],
            [["Grade 1", "Continue at the current dose"],
             ["Grade 2", "Interrupt until recovery to Grade 1 or baseline; resume at 75 mg"],
             ["Grade 3", "Interrupt until recovery to Grade 1 or baseline; resume at 50 mg"],
             ["Grade 4", "Discontinue permanently"]],
            [0.22, 0.78], align=["l", "l"], grid=True, size=9,
            anchors={"dose_g3": (2, 1), "dose_g2": (1, 1)}, caption_anchor="dose_table")
    fill(b, pr, 17, heads=heads)
    # p18-19 schedule of assessments
    b.heading("6 Schedule of assessments", 1)
    b.para("Table 6 lists the assessments at each visit. Visit windows are plus or minus 3 days up to "
           "Week 12 and plus or minus 7 days thereafter.")
    rows = []
    for name, vis in MED_SOA:
        rows.append([name] + ["X" if v in vis else "" for v in range(1, 10)])
    b.table("Table 6: Schedule of assessments", ["Assessment"] + MED_VISITS, rows,
            [0.28] + [0.08] * 9, align=["l"] + ["c"] * 9, grid=True, size=8.5,
            anchors={"soa_ecg": (5, 0), "soa_pk": (10, 0)}, caption_anchor="soa_table")
    fill(b, pr, 19, heads=heads)
    # p20-23 safety
    b.heading("7 Safety", 1)
    add_paras(b, pr, 2)
    b.para("Serious adverse events must be reported to the sponsor within 24 hours of the investigator "
           "becoming aware of the event.", marks={"sae": "within 24 hours"})
    fill(b, pr, 23, heads=heads)
    # p24-27 statistics
    b.heading("8 Statistical considerations", 1)
    b.heading("8.1 Sample size", 2, toc=False)
    b.para("Assuming a treatment difference of 1.8 monthly migraine days and a standard deviation of 5.1, "
           "a two-sided significance level of 0.05 and 90% power, 552 evaluable participants are needed. "
           "Allowing for a dropout rate of 9.8%, a total of 612 participants will be randomised in a 2:1 "
           "ratio.", marks={"ss": "a total of 612 participants"})
    b.heading("8.2 Primary analysis", 2, toc=False)
    b.para("The primary endpoint will be analysed using the mixed model for repeated measures specified "
           "in Section 8.4.", marks={"prim_ref": "specified in Section 8.4"})
    add_paras(b, pr, 3)
    b.heading("8.3 Projected enrolment", 2, toc=False)
    b.para("Figure 2 shows the cumulative number of randomised participants projected by month from the "
           "first randomisation.")
    b.line_chart("Figure 2: Projected cumulative enrolment by month", list(range(1, 15)),
                 [("Cumulative participants", MED_ENROL, (0.35, 0.1, 0.25), None)], key="fig2",
                 ylabel="Participants", ymin=0, ymax=700, ystep=100, xlabel="Month after first randomisation",
                 label_points=True, fmt="{:.0f}", height=220)
    fill(b, pr, 25, heads=heads)
    b.heading("8.4 Model specification", 2, toc=False)
    b.para("The mixed model for repeated measures includes fixed effects for treatment, visit, "
           "treatment-by-visit interaction, baseline monthly migraine days and geographic region. An "
           "unstructured covariance matrix is used.", marks={"mmrm": "baseline monthly migraine days and geographic region"})
    fill(b, pr, 27, heads=heads)
    # p28-32 ethics / data
    b.heading("9 Ethics and data handling", 1)
    fill(b, pr, 32, heads=heads)
    # p33-36 appendices
    b.heading("Appendix 2: Participating countries", 1)
    b.table("Table 8: Participating countries and sites", ["Country", "Sites", "Added in"],
            [list(c) for c in MED_COUNTRIES] + [["Total", "34", ""]], [0.45, 0.2, 0.35],
            align=["l", "r", "l"], grid=True, size=9, bold_rows=(6,),
            anchors={f"ctry_{i}": (i, 0) for i in range(6)} | {"ctry_total": (6, 1)},
            caption_anchor="ctry_table")
    fill(b, pr, 36, heads=heads)
    _drop_trailing(b)
    n = b.save(path, {"title": "VLX-301 Clinical Study Protocol, Version 3.0", "author": "Halden Therapeutics AB"})
    return b.anchors, n, b.toc


def _study_schema(b: Builder):
    b.ensure(250)
    x0, y0 = b.cx, b.y + 4
    W = b.cw
    boxes = [
        ((x0, y0 + 80, x0 + 80, y0 + 140), ["Screening", "Day -28 to Day -1"]),
        ((x0 + 96, y0 + 90, x0 + 160, y0 + 130), ["Randomisation", "2:1"]),
        ((x0 + 178, y0 + 30, x0 + 290, y0 + 80), ["Velorexant 75 mg", "once daily", "n = 408"]),
        ((x0 + 178, y0 + 140, x0 + 290, y0 + 190), ["Placebo", "once daily", "n = 204"]),
        ((x0 + 308, y0 + 80, x0 + 416, y0 + 140), ["Open-label extension", "Velorexant 50 mg or 75 mg",
                                                   "Weeks 12 to 52"]),
        ((x0 + 426, y0 + 80, x0 + W, y0 + 140), ["Follow-up", "Week 56"]),
    ]
    for r, lines in boxes:
        b.box(r, lines, size=7, bold_first=True, fill=FILL if lines[0] != "Follow-up" else (1, 1, 1))
    b.arrow((x0 + 80, y0 + 110), (x0 + 96, y0 + 110))
    b.arrow((x0 + 160, y0 + 105), (x0 + 178, y0 + 60))
    b.arrow((x0 + 160, y0 + 115), (x0 + 178, y0 + 160))
    b.arrow((x0 + 290, y0 + 60), (x0 + 308, y0 + 100))
    b.arrow((x0 + 290, y0 + 160), (x0 + 308, y0 + 120))
    b.arrow((x0 + 416, y0 + 110), (x0 + 426, y0 + 110))
    ty = y0 + 212
    b.arrow((x0, ty), (x0 + W, ty), color=GREY, width=0.6)
    for lab, xx in [("Week -4", x0 + 10), ("Week 0", x0 + 128), ("Week 12", x0 + 299),
                    ("Week 52", x0 + 416), ("Week 56", x0 + 446)]:
        b.line((xx, ty - 3), (xx, ty + 3), GREY, 0.6)
        b.text_center(xx, ty + 12, lab, size=6.5)
    b.text_center(x0 + 234, y0 + 16, "Double-blind treatment period (12 weeks)", size=7, color=GREY)
    bbox = (x0, y0, x0 + W, ty + 16)
    b.y = ty + 24
    b._figure_caption("Figure 1: Study design schema", "fig1", 8.5, x0, W, bbox, "hebo")
    b.anchors["fig1_ole"] = {"page": b.pno, "quote": "Velorexant 50 mg or 75 mg", "bbox": b.anchors["fig1"]["bbox"]}


# ====================================================================================
# 3. legal_regulation: regulation with numbered articles (100+ pages)
# ====================================================================================
LEG_CHAPTERS = [
    ("I", "General provisions", 1, 3), ("II", "Obligations of operators", 4, 16),
    ("III", "Inspections", 17, 28), ("IV", "Equipment on board", 29, 40),
    ("V", "Certificates and fees", 41, 50), ("VI", "Enforcement and penalties", 51, 60),
    ("VII", "Delegated powers, transitional and final provisions", 61, 72),
]
LEG_TITLES = ["Subject matter", "Scope", "Definitions", "General obligations", "Technical documentation",
              "Crew instruction", "Record keeping", "Notification of incidents", "Cooperation with authorities",
              "Information to passengers", "Insurance", "Technical requirements", "Vessel modifications",
              "Obligations of operators", "Contact points", "Small operators",
              "Inspection bodies", "Independence of inspection bodies", "Competence of inspectors",
              "Initial inspection", "Intermediate inspection", "Periodic inspections", "Inspection reports",
              "Follow-up of deficiencies", "Access to vessels", "Mutual recognition", "Joint inspections",
              "Inspection database",
              "Stability", "Fire protection", "Pressure equipment", "Electrical installations",
              "Lifting gear", "Navigation equipment", "Mooring equipment", "Life-saving appliances",
              "Emission control", "Noise on board", "Equipment standards", "Type approval of equipment",
              "Community certificate", "Validity of certificates", "Renewal of certificates",
              "Supplementary certificates", "Fees", "Duplicate certificates", "Withdrawal of certificates",
              "Register of certificates", "Electronic certificates", "Language of certificates",
              "Market surveillance", "Detention of vessels", "Right of appeal", "Reporting by Member States",
              "Exchange of information", "Confidentiality", "Cooperation between authorities",
              "Penalties", "Review of penalties", "Annual report",
              "Amendment of the Annexes", "Exercise of the delegation", "Committee procedure",
              "Implementing acts", "Review", "Transitional provisions", "Existing certificates",
              "Derogations for historic vessels", "Evaluation", "Repeal", "References", "Entry into force"]


def build_legal(path):
    def hdr(i, n):
        return (f"L 311/{i}", "Official Journal of the Riverine Union                EN                15.11.2023")

    b = Builder(body_font="tiro", body_size=10, header=hdr,
                footer=lambda i, n: ("Regulation (RX) 2023/117", str(i)), margins=(70, 78, 70, 74))
    b.no_chrome = {1}
    pr = Prose("legal", 303)
    # p1 cover
    b.text(70, 90, "Official Journal", "tibo", 30)
    b.text(70, 118, "of the Riverine Union", "tibo", 18)
    b.text(70, 160, "L 311", "tibo", 22)
    b.anchor("oj_issue", "L 311")
    b.text(300, 160, "Volume 66", "tiro", 12)
    b.text(420, 160, "15 November 2023", "tiro", 12)
    b.anchor("oj_date", "15 November 2023")
    b.line((70, 175), (525, 175), BLACK, 1.2)
    b.text(70, 200, "English edition", "tiit", 11)
    b.text(70, 236, "Contents", "tibo", 12)
    b.text(70, 262, "I   Legislative acts", "tibo", 10)
    b.text(70, 284, "REGULATIONS", "tibo", 10)
    y = 306
    for ln in wrap("Regulation (RX) 2023/117 of the Council of the Riverine Union of 8 November 2023 on the "
                   "safety of inland waterway vessels and of equipment installed on board ........ 1",
                   440, "tiro", 10):
        b.text(86, y, ln, "tiro", 10)
        y += 14
    b.new_page()
    # p2.. title and recitals in two columns
    b.para("REGULATION (RX) 2023/117 OF THE COUNCIL OF THE RIVERINE UNION", font="tibo", size=11)
    b.para("of 8 November 2023", font="tiro", size=10)
    b.para("on the safety of inland waterway vessels and of equipment installed on board", font="tibo", size=11)
    b.para("THE COUNCIL OF THE RIVERINE UNION, Having regard to the Treaty establishing the Riverine Union, "
           "and in particular Article 91 thereof, Whereas:")
    b.begin_columns()
    for r in range(1, 49):
        b.para(f"({r}) " + pr.paragraph(2, 3), size=9.5)
    b.end_columns() if b.col == 1 else None
    b.columns = 1
    b.page_break()
    b.para("HAVE ADOPTED THIS REGULATION:", font="tibo")
    art_text = _legal_articles()
    for num, roman, ctitle in [(c[2], c[0], c[1]) for c in LEG_CHAPTERS]:
        pass
    chap_start = {c[2]: c for c in LEG_CHAPTERS}
    for a in range(1, 73):
        if a in chap_start:
            c = chap_start[a]
            b.ensure(190)
            b.space(8)
            b.text_center(b.W / 2, b.y + 11, f"CHAPTER {c[0]}", "tiro", 11)
            b.y += 18
            b.text_center(b.W / 2, b.y + 11, c[1], "tibo", 11)
            b.y += 24
            b.toc.append((1, f"Chapter {c[0]}: {c[1]}", b.pno))
        b.ensure(90)
        b.text_center(b.W / 2, b.y + 10, f"Article {a}", "tiit", 10)
        b.y += 15
        b.text_center(b.W / 2, b.y + 10, LEG_TITLES[a - 1], "tibo", 10)
        b.y += 18
        b.toc.append((2, f"Article {a}", b.pno))
        special = art_text.get(a)
        numbered = 0
        if special:
            for para, marks in special:
                if para.startswith("- "):
                    b.para(para[2:], indent=18, marks=marks)
                else:
                    b.para(para, marks=marks)
                m = re.match(r"(\d+)\. ", para)
                numbered = max(numbered, int(m.group(1))) if m else numbered
            # articles worded in full (no numbered paragraphs) get no filler paragraphs
            add = 2 + a % 2 if numbered else 0
        else:
            add = 8 + (a % 5)
        for k in range(add):
            b.para(f"{numbered + k + 1}. " + pr.paragraph(3, 5))
    b.para("This Regulation shall be binding in its entirety and directly applicable in all Member States.",
           font="tiit")
    b.para("Done at Lindenburg, 8 November 2023.", marks={"done": "Done at Lindenburg, 8 November 2023."})
    b.para("For the Council", font="tibo", after=2)
    b.para("The President", after=2)
    b.para("A. VERHOEVEN")
    b.page_break()
    # Annexes
    b.heading("ANNEX I", 1, toc=True)
    b.para("Categories of equipment", font="tibo")
    cats = [["A", "Pressure equipment", "Boilers, pressure vessels, heat exchangers and associated piping"],
            ["B", "Lifting gear", "Cranes, davits, hoists and lifting accessories"],
            ["C", "Fire protection", "Fixed fire-extinguishing and fire-detection systems"],
            ["D", "Navigation equipment", "Radar, inland ECDIS, rate-of-turn indicators and AIS"],
            ["E", "Hull and structure", "Shell plating, bulkheads, hatch covers and watertight doors"],
            ["F", "Mooring equipment", "Winches, bollards, mooring lines and anchor gear"]]
    add_paras(b, pr, 5)
    b.table("Table I.1: Categories of equipment installed on board", ["Category", "Name", "Includes"],
            cats, [0.14, 0.28, 0.58], align=["c", "l", "l"], grid=True, size=9,
            anchors={"ann1_F": (5, 1), "ann1_A": (0, 2)}, caption_anchor="ann1_table")
    add_paras(b, pr, 2)
    b.page_break()
    b.heading("ANNEX II", 1)
    b.para("Model of the Riverine certificate for inland waterway vessels", font="tibo")
    add_paras(b, pr, 6)
    b.page_break()
    b.heading("ANNEX III", 1)
    b.para("Maximum intervals between periodic inspections", font="tibo")
    b.table("Table III.1: Maximum inspection intervals", ["Category", "Equipment", "Maximum interval"],
            [["A", "Pressure equipment", "12 months"], ["B", "Lifting gear", "6 months"],
             ["C", "Fire protection", "12 months"], ["D", "Navigation equipment", "24 months"],
             ["E", "Hull and structure", "60 months"]],
            [0.16, 0.5, 0.34], align=["c", "l", "r"], grid=True, size=9.5,
            anchors={"ann3_A": (0, 2), "ann3_B": (1, 2), "ann3_Blab": (1, 1)}, caption_anchor="ann3_table")
    add_paras(b, pr, 2)
    b.page_break()
    b.heading("ANNEX IV", 1)
    b.para("Fees", font="tibo")
    b.table("Table IV.1: Fees for certificates and inspections (EUR)", ["Service", "Fee"],
            [["Initial certification", "2,400"], ["Renewal of a certificate", "1,150"],
             ["Intermediate inspection", "680"], ["Duplicate certificate", "95"]],
            [0.7, 0.3], grid=True, size=9.5, anchors={"fee_renew": (1, 1), "fee_renew_lab": (1, 0)},
            caption_anchor="fee_table")
    b.page_break()
    b.heading("ANNEX V", 1)
    b.para("Results of the 2022 pilot inspection programme", font="tibo")
    b.para("Figures use the decimal comma, as reported by the Member States.", font="tiit", size=9)
    stats = [["Aldoria", "1 204", "89,9"], ["Brevania", "876", "84,2"], ["Castria", "1 530", "91,7"],
             ["Dunmark", "642", "78,5"], ["Estavia", "958", "86,0"]]
    b.table("Table V.1: Vessels inspected and compliance rate", ["Member State", "Vessels inspected",
                                                                  "Compliance rate (%)"],
            stats, [0.4, 0.3, 0.3], grid=True, size=9.5,
            anchors={"stat_aldoria": (0, 2), "stat_dunmark": (3, 2), "stat_dun_lab": (3, 0)},
            caption_anchor="stat_table")
    add_paras(b, pr, 3)
    fill(b, pr, b.pno)
    _drop_trailing(b)
    b.anchor("hdr_45", "L 311/45", page=45)
    n = b.save(path, {"title": "Regulation (RX) 2023/117 on the safety of inland waterway vessels",
                      "author": "Council of the Riverine Union"})
    return b.anchors, n, b.toc


def _legal_articles():
    """Articles with fixed wording (the facts questions rely on). Values: list of (paragraph, marks)."""
    A = {}
    A[1] = [("This Regulation lays down rules on the safety of inland waterway vessels and of the equipment "
             "installed on board, and on the inspection and certification of such vessels.", None)]
    A[2] = [("1. This Regulation applies to:", None),
            ("- (a) passenger vessels;", None),
            ("- (b) cargo vessels with a length of 20 m or more;", None),
            ("- (c) tugs, pushers and service craft;", None),
            ("- (d) floating equipment and transfer terminals connecting inland waterways to rail.", None),
            ("2. This Regulation does not apply to warships or to recreational craft.", None)]
    defs = {
        1: ("'vessel' means any inland waterway vessel, including floating equipment;", None),
        2: ("'operator' means the owner of a vessel or any person who has assumed responsibility for its "
            "operation;", None),
        5: ("'equipment' means any item listed in Annex I that is installed on board;", None),
        12: ("'maximum allowable working pressure' means the maximum pressure for which equipment is "
             "designed, as specified by the manufacturer;", None),
        17: ("'small operator' means an operator employing fewer than 50 persons and whose annual turnover "
             "does not exceed EUR 10 million;", {"def_small": "'small operator' means an operator"}),
        21: ("'competent authority' means the authority designated by a Member State under Article 15;", None),
    }
    generic = [
        ("passenger vessel", "a vessel built and equipped to carry more than 12 passengers"),
        ("cargo vessel", "a vessel built and equipped primarily for the carriage of goods"),
        ("floating equipment", "a floating structure carrying working gear, such as a crane, dredger or pile driver"),
        ("transfer terminal", "an installation at which goods are transferred between vessels and rail wagons"),
        ("master", "the person in command of a vessel"),
        ("crew member", "any person employed on board other than the master"),
        ("inspection body", "a body authorised by a competent authority to carry out inspections under this "
                            "Regulation"),
        ("recognised classification society", "a classification society recognised in accordance with Article 26"),
        ("notified body", "a body notified under Article 40 to assess the conformity of equipment"),
        ("certificate", "the Riverine certificate issued in accordance with Article 41"),
        ("periodic inspection", "an inspection carried out at regular intervals during the validity of a "
                                "certificate"),
        ("modification", "any change to a vessel that affects its stability, structure or equipment"),
        ("incident", "an event that has caused or could have caused injury, pollution or damage to a vessel"),
        ("deficiency", "a failure to comply with a requirement of this Regulation"),
        ("technical documentation", "the drawings, calculations and records describing a vessel and its equipment"),
        ("type approval", "the procedure by which a type of equipment is certified as meeting the standards "
                          "referred to in Article 39"),
        ("lifting gear", "cranes, davits, hoists and their accessories installed on board"),
        ("register", "the register of certificates referred to in Article 48"),
    ]
    for i in range(1, 25):
        if i not in defs:
            term, meaning = generic.pop(0)
            defs[i] = (f"'{term}' means {meaning};", None)
    A[3] = [("For the purposes of this Regulation, the following definitions apply:", None)] + [
        (f"- ({i}) {defs[i][0]}", defs[i][1]) for i in range(1, 25)]
    A[12] = [("1. The Commission is empowered to adopt delegated acts in accordance with Article 62 to "
              "update the technical requirements referred to in this Chapter in the light of technical progress.",
              {"del12": "empowered to adopt delegated acts"})]
    A[14] = [("1. Operators shall ensure that the equipment on board is inspected and maintained in "
              "accordance with this Regulation.", None),
             ("2. Operators shall carry out the periodic inspections referred to in Article 22 at intervals "
              "not exceeding those laid down in that Article.",
              {"art14_2": "periodic inspections referred to in Article 22"})]
    A[22] = [("1. Periodic inspections shall be carried out for each category of equipment listed in "
              "Annex I at the intervals laid down in Annex III.",
              {"art22": "at the intervals laid down in Annex III"}),
             ("2. The inspection body shall record the results of each periodic inspection in the inspection "
              "database referred to in Article 28.", None)]
    A[31] = [("1. Pressure equipment shall be designed, manufactured and installed so as to prevent any "
              "hazard from the release of pressurised media.", None),
             ("2. Heat exchangers installed on board shall have a maximum allowable working pressure not "
              "exceeding 16 bar and shall be fitted with a pressure relief device set at no more than "
              "110% of that pressure.",
              {"art31_16": "not exceeding 16 bar", "art31_110": "110% of that pressure"})]
    A[39] = [("1. The Commission is empowered to adopt delegated acts in accordance with Article 62 to "
              "amend the list of equipment standards referred to in paragraph 2.",
              {"del39": "empowered to adopt delegated acts"})]
    A[45] = [("1. The competent authority shall charge the fees set out in Annex IV for the issue and renewal "
              "of certificates and for inspections.", {"art45_1": "fees set out in Annex IV"}),
             ("2. Fees shall not exceed the cost of the service provided.", None),
             ("3. Small operators as defined in Article 3(17) shall pay 40% of the fees set out in Annex IV.",
              {"art45_3": "shall pay 40% of the fees"})]
    A[58] = [("1. Member States shall lay down rules on penalties applicable to infringements of this "
              "Regulation.", None),
             ("2. For infringements of Articles 14 and 31, the maximum fine shall be at least 4% of the "
              "operator's total annual worldwide turnover in the preceding financial year or EUR 2 000 000, "
              "whichever is higher.",
              {"art58": "at least 4% of the"})]
    A[61] = [("1. The Commission is empowered to adopt delegated acts in accordance with Article 62 to amend "
              "Annexes I, III and IV.", {"del61": "empowered to adopt delegated acts"})]
    A[66] = [("1. Vessels whose keel was laid before 1 January 2020 shall comply with Article 31 by "
              "31 December 2027.", {"art66": "shall comply with Article 31 by"}),
             ("2. Certificates issued before the date of application of this Regulation shall remain valid "
              "until their expiry.", None)]
    A[72] = [("This Regulation shall enter into force on the twentieth day following that of its publication "
              "in the Official Journal of the Riverine Union.", {"art72_eif": "on the twentieth day following"}),
             ("It shall apply from 1 July 2025.", {"art72_apply": "It shall apply from 1 July 2025."}),
             ("However, Articles 45 and 58 shall apply from 1 January 2026.",
              {"art72_late": "Articles 45 and 58 shall apply from 1 January 2026."})]
    return A


# ====================================================================================
# 4. technical_engineering: manual
# ====================================================================================
TECH_MODELS = ["HX-410", "HX-420", "HX-440", "HX-460"]
TECH_SPEC = [
    ("Maximum allowable working pressure (bar)", ["10", "16", "25", "25"]),
    ("Relief valve set pressure (bar)", ["11.0", "17.5", "27.5", "27.5"]),
    ("Maximum operating temperature (C)", ["150", "180", "180", "200"]),
    ("Nominal flow rate (m3/h)", ["35", "60", "140", "220"]),
    ("Heat transfer area (m2)", ["12.5", "24.0", "58.0", "96.0"]),
    ("Number of plates", ["40", "76", "150", "240"]),
    ("Dry weight (kg)", ["185", "340", "910", "1,480"]),
    ("Connection size", ["DN 50", "DN 80", "DN 125", "DN 150"]),
]
TECH_DP = [(10, 0.08), (20, 0.25), (30, 0.52), (40, 0.88), (50, 1.34), (60, 1.90), (70, 2.55)]


def build_technical(path):
    doc_no = "KTS-IOM-HX400-EN Rev. D"
    b = Builder(body_font="helv", body_size=9.5,
                header=lambda i, n: ("Kestrel Thermal Systems GmbH", "HX-400 Series - Installation, Operation and Maintenance"),
                footer=lambda i, n: (doc_no, f"Page {i}"), heading_color=(0.6, 0.25, 0.0))
    b.no_chrome = {1}
    pr = Prose("technical", 404)
    heads = ["Preparation", "Procedure", "Checks", "Notes", "Safety precautions"]
    # cover
    b.rect((0, 0, b.W, 120), color=None, fill=(0.6, 0.25, 0.0), width=0)
    b.text(64, 70, "KESTREL THERMAL SYSTEMS", "hebo", 18, (1, 1, 1))
    b.text(64, 220, "HX-400 Series", "hebo", 30)
    b.text(64, 252, "Plate Heat Exchangers", "helv", 18)
    b.text(64, 290, "Installation, Operation and Maintenance Manual", "helv", 14)
    b.text(64, 320, "Models HX-410, HX-420, HX-440 and HX-460", "heit", 11)
    _cover_exchanger(b, 150, 380)
    b.text(64, 740, "Document KTS-IOM-HX400-EN", "cour", 10)
    b.text(64, 756, "Revision D, March 2023", "helv", 10)
    b.anchor("cover_rev", "Revision D, March 2023")
    b.new_page()
    # revision history
    b.heading("Revision history", 1)
    b.table("Table 0-1: Revisions of this manual", ["Rev.", "Date", "Changes"],
            [["A", "April 2019", "First edition covering HX-410, HX-420 and HX-440"],
             ["B", "November 2020", "Tightening torques revised; EPDM-HT gasket material added"],
             ["C", "September 2021", "HX-460 model added; maintenance schedule revised"],
             ["D", "March 2023", "Conformity with Regulation (RX) 2023/117 added; Figure 5-3 updated"]],
            [0.1, 0.22, 0.68], align=["c", "l", "l"], grid=True, size=9,
            anchors={"rev_c": (2, 2), "rev_c_date": (2, 1)}, caption_anchor="rev_table")
    fill(b, pr, 2)
    b.heading("1 Safety", 1)
    fill(b, pr, 6, heads=heads)
    b.heading("2 Description of the unit", 1)
    fill(b, pr, 10, heads=["Frame", "Plate pack", "Gaskets", "Connections", "Nameplate"])
    # technical data
    b.heading("3 Technical data", 1)
    b.para("Table 3-1 gives the main data for each model. The values on the nameplate of the individual "
           "unit take precedence over this table.")
    rows = [[lab] + vals for lab, vals in TECH_SPEC]
    anchors = {}
    for i, (lab, vals) in enumerate(TECH_SPEC):
        anchors[f"spec_{i}_lab"] = (i, 0)
        for j, m in enumerate(TECH_MODELS):
            anchors[f"spec_{i}_{m}"] = (i, j + 1)
    b.table("Table 3-1: Technical specifications", ["Parameter"] + TECH_MODELS, rows,
            [0.4, 0.15, 0.15, 0.15, 0.15], anchors=anchors, caption_anchor="spec_table", grid=True, size=9)
    fill(b, pr, 11, heads=heads)
    # installation + figure 4-2
    b.heading("4 Installation", 1)
    add_paras(b, pr, 3)
    b.heading("4.3 Piping connections", 2, toc=False)
    b.para("Connect the pipework as shown in Figure 4-2. The media must flow in counter-current; "
           "connecting the circuits in co-current reduces the thermal performance considerably.")
    _piping_diagram(b)
    fill(b, pr, 20, heads=heads)
    # operation + figure 5-3
    b.heading("5 Operation", 1)
    add_paras(b, pr, 3)
    b.heading("5.3 Pressure drop", 2, toc=False)
    b.para("Figure 5-3 shows the pressure drop of the HX-420 on the cold side as a function of flow rate, "
           "measured with water at 20 C.")
    b.line_chart("Figure 5-3: Pressure drop of the HX-420 versus flow rate",
                 [x for x, _ in TECH_DP], [("HX-420, water at 20 C", [v for _, v in TECH_DP],
                                            (0.6, 0.25, 0.0), None)],
                 key="fig53", ylabel="Pressure drop (bar)", ymin=0, ymax=3.0, ystep=0.5,
                 xlabel="Flow rate (m3/h)", label_points=True, fmt="{:.2f}", height=220)
    fill(b, pr, 28, heads=heads)
    # assembly: torques
    b.heading("6 Assembly and tightening", 1)
    add_paras(b, pr, 2)
    b.para("The HX-410 and HX-420 use M24 tie bolts, the HX-440 uses M30 tie bolts and the HX-460 uses "
           "M36 tie bolts.", marks={"bolts": "the HX-440 uses M30 tie bolts"})
    add_paras(b, pr, 4)
    b.table("Table 6-1: Tightening torque for tie bolts (lubricated)", ["Bolt size", "Torque (Nm)"],
            [["M24", "350"], ["M30", "680"], ["M36", "1,150"], ["M42", "1,820"]], [0.5, 0.5],
            grid=True, size=9.5, anchors={"tq_m30": (1, 1), "tq_m30_lab": (1, 0)}, caption_anchor="tq_table")
    fill(b, pr, 34, heads=heads)
    # maintenance
    b.heading("7 Maintenance", 1)
    add_paras(b, pr, 2)
    b.table("Table 7-1: Maintenance schedule", ["Task", "Interval"],
            [["Visual inspection for leaks", "Daily"], ["Check pressure gauges and thermometers", "Weekly"],
             ["Clean strainers", "Monthly"], ["Clean plates in place (CIP)", "Every 3 months"],
             ["Inspect gaskets", "Every 6 months"], ["Hydrostatic pressure test", "Every 12 months"],
             ["Replace gaskets", "Every 5 years"]],
            [0.65, 0.35], align=["l", "l"], grid=True, size=9.5,
            anchors={"mnt_ptest": (5, 1), "mnt_ptest_lab": (5, 0)}, caption_anchor="mnt_table")
    fill(b, pr, 40, heads=heads)
    # troubleshooting
    b.heading("8 Troubleshooting", 1)
    b.table("Table 8-1: Troubleshooting", ["Symptom", "Possible cause", "Remedy"],
            [["External leakage at plate pack", "Tie bolts not tightened to dimension A",
              "Re-tighten to dimension A, see Table 6-1"],
             ["Insufficient heat transfer", "Fouled plates", "Clean plates, see Section 7.4"],
             ["High pressure drop", "Blocked strainer or fouled plates", "Clean strainer and plates"],
             ["Mixing of media", "Perforated plate", "Replace the plate and test for leaks"]],
            [0.3, 0.33, 0.37], align=["l", "l", "l"], grid=True, size=9)
    fill(b, pr, 46, heads=heads)
    # spare parts / warranty
    b.heading("9 Spare parts and warranty", 1)
    add_paras(b, pr, 3)
    b.para("The warranty period is 24 months from commissioning or 30 months from delivery, whichever "
           "expires first.", marks={"warranty": "24 months from commissioning"})
    fill(b, pr, 52, heads=heads)
    b.heading("10 Conformity", 1)
    b.para("Units supplied for installation on inland waterway vessels conform to Article 31 of "
           "Regulation (RX) 2023/117 when ordered with the marine option.",
           marks={"conf": "Article 31 of"})
    fill(b, pr, 54)
    _drop_trailing(b)
    b.anchor("footer_docno", doc_no, page=27)
    n = b.save(path, {"title": "HX-400 Series Installation, Operation and Maintenance Manual, Rev. D",
                      "author": "Kestrel Thermal Systems GmbH"})
    n = append_scanned_page(path, b.W, b.H)
    b.anchor("cert_test", CERT_QUOTE, page=n)
    return b.anchors, n, b.toc


# The manual's last page is a scanned works test certificate: a picture of text with no text layer
# (as a scan bound into a PDF), so that only OCR can read it. SCAN_LINES are drawn on a scratch page
# with base-14 fonts, rendered to a grayscale PNG at SCAN_DPI and inserted as the page's only content.
SCAN_DPI = 150
CERT_QUOTE = "The unit passed the hydrostatic test at 24.5 bar"
SCAN_LINES = [  # (x, baseline y, text, font, size) in points
    (64, 110, "KESTREL THERMAL SYSTEMS GmbH", "hebo", 16),
    (64, 136, "Works Test Certificate No. WTC-0419", "helv", 13),
    (64, 190, "Unit: HX-420 plate heat exchanger", "helv", 12),
    (64, 212, "Serial number: 420-17736", "helv", 12),
    (64, 250, CERT_QUOTE, "helv", 12),
    (64, 272, "Test medium: water, holding time 30 minutes", "helv", 12),
    (64, 294, "No leakage or permanent deformation was found.", "helv", 12),
    (64, 350, "Inspector: Margit Lindholm", "heit", 12),
    (64, 372, "Date of test: 14 February 2023", "helv", 12),
]


def scanned_page(width, height):
    """(PNG bytes of the certificate, [(x0, y0, x1, y1, word)] where each word was drawn, in points)."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    page.draw_rect(pymupdf.Rect(48, 80, width - 48, 400), color=(0.3, 0.3, 0.3), width=1)
    for x, y, text, font, size in SCAN_LINES:
        page.insert_text((x, y), text, fontname=font, fontsize=size)
    words = [(*[round(v, 2) for v in w[:4]], w[4]) for w in page.get_text("words")]
    png = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY, alpha=False).tobytes("png")
    doc.close()
    return png, words


def append_scanned_page(path, width, height):
    """Append the certificate as an image-only page to the saved PDF (same fixed metadata, no new
    /ID, so the bytes stay reproducible); returns the new page count."""
    import pymupdf

    png, _ = scanned_page(width, height)
    doc = pymupdf.open(path)
    page = doc.new_page(width=width, height=height)
    page.insert_image(page.rect, stream=png)
    n = doc.page_count
    doc.save(path + ".tmp", garbage=4, deflate=True, no_new_id=True)
    doc.close()
    os.replace(path + ".tmp", path)
    return n


def _cover_exchanger(b, x, y):
    b.rect((x, y, x + 40, y + 220), color=BLACK, fill=(0.75, 0.75, 0.78), width=1)
    b.rect((x + 250, y, x + 290, y + 220), color=BLACK, fill=(0.75, 0.75, 0.78), width=1)
    for k in range(26):
        xx = x + 46 + k * 7.8
        b.rect((xx, y + 12, xx + 4, y + 208), color=None, fill=(0.55, 0.6, 0.68), width=0)
    b.line((x, y + 30), (x + 290, y + 30), BLACK, 2)
    b.line((x, y + 190), (x + 290, y + 190), BLACK, 2)


def _piping_diagram(b):
    b.ensure(280)
    x0, y0 = b.cx, b.y + 4
    W = b.cw
    fx, fy = x0 + 80, y0 + 20
    # frame plate, plate pack, pressure plate
    b.rect((fx, fy, fx + 26, fy + 200), color=BLACK, fill=(0.8, 0.8, 0.82), width=1)
    for k in range(14):
        xx = fx + 30 + k * 7
        b.rect((xx, fy + 10, xx + 4, fy + 190), color=None, fill=(0.6, 0.65, 0.72), width=0)
    b.rect((fx + 132, fy, fx + 158, fy + 200), color=BLACK, fill=(0.8, 0.8, 0.82), width=1)
    # ports on frame plate
    ports = [("S1", fy + 35, (0.75, 0.1, 0.1), "in"), ("S2", fy + 165, (0.75, 0.1, 0.1), "out"),
             ("S3", fy + 165, (0.1, 0.3, 0.75), "in"), ("S4", fy + 35, (0.1, 0.3, 0.75), "out")]
    for i, (lab, py, col, d) in enumerate(ports):
        side_x = fx - 60 if i < 2 else fx + 158 + 60
        conn_x = fx if i < 2 else fx + 158
        b.shape.draw_circle((conn_x, py), 7)
        b.shape.finish(color=BLACK, fill=(1, 1, 1), width=0.8)
        b.text_center(conn_x, py + 2.5, lab, "hebo", 6.5)
        if d == "in":
            b.arrow((side_x, py), (conn_x - (7 if i < 2 else -7), py), color=col, width=1.4)
        else:
            b.arrow((conn_x - (7 if i < 2 else -7), py), (side_x, py), color=col, width=1.4)
    b.text(fx - 5, fy - 6, "Frame plate", size=7)
    b.text(fx + 110, fy + 214, "Pressure plate", size=7)
    # legend
    lx, ly = x0 + W - 130, y0 + 30
    b.rect((lx - 6, ly - 12, lx + 146, ly + 62), color=GREY, fill=(0.97, 0.97, 0.97), width=0.5)
    for k, t in enumerate(["S1 Hot medium inlet", "S2 Hot medium outlet", "S3 Cold medium inlet",
                           "S4 Cold medium outlet"]):
        b.text(lx, ly + k * 14, t, size=7.5)
    bbox = (x0, y0, x0 + W, fy + 224)
    b.y = fy + 232
    b._figure_caption("Figure 4-2: Piping connection diagram (frame plate side)", "fig42", 8.5, x0, W,
                      bbox, "hebo")
    b.anchors["fig42_s3"] = {"page": b.pno, "quote": "S3 Cold medium inlet", "bbox": b.anchors["fig42"]["bbox"]}


# ====================================================================================
# 5. scientific_academic: paper
# ====================================================================================
SCI_METHODS = [("Full-context LLM", [41.2, 38.5, 36.9]), ("BM25-RAG", [44.8, 45.1, 40.3]),
               ("DensePage", [47.5, 46.0, 43.8]), ("ColPali-R", [49.1, 44.2, 45.0]),
               ("SPARK (ours)", [53.6, 50.9, 48.7])]
SCI_LEN = ["0-50", "50-100", "100-200", "200-500", "500+"]
SCI_LEN_SPARK = [61.0, 57.2, 53.9, 49.5, 45.1]
SCI_LEN_FULL = [58.3, 49.0, 38.6, 27.4, 19.8]
SCI_ABL = [("SPARK (full)", "53.6"), ("w/o sparse index", "49.9"), ("w/o page reranker", "47.2"),
           ("w/o query rewriting", "52.8"), ("w/o layout tokens", "51.0")]
SCI_REFS = [
    "A. Brown and T. Chen. Retrieval for long documents. In Proc. of EMNLP, 2021.",
    "R. Okafor, D. Li and S. Weber. Page-level dense retrieval. In Proc. of NAACL, 2022.",
    "M. Fischer. Sparse lexical models revisited. Information Retrieval Journal, 2020.",
    "J. Park and H. Kim. Layout-aware encoders for PDF understanding. In Proc. of ICDAR, 2021.",
    "E. Rossi et al. Long-context language models: a survey. arXiv preprint, 2023.",
    "P. Novak. Query rewriting for retrieval-augmented generation. In Proc. of SIGIR, 2023.",
    "L. Martin and C. Diaz. Financial report question answering. In Proc. of FinNLP, 2022.",
    "S. Gupta et al. Multi-hop reasoning over tables. In Proc. of ACL, 2021.",
    "Y. Zhou and K. Adams. Visual retrieval of document pages. In Proc. of CVPR, 2023.",
    "F. Haddad. Legal document understanding at scale. In Proc. of JURIX, 2022.",
    "N. Ivanova and B. Clarke. Efficient rerankers for long inputs. In Proc. of ECIR, 2023.",
    "D. Mensah. Benchmarking document QA systems. In Proc. of LREC, 2022.",
    "G. Silva et al. Chunking strategies for RAG. arXiv preprint, 2023.",
    "H. Yamamoto. Attention dilution in long contexts. In Proc. of ICLR, 2024.",
    "T. Berger and A. Costa. Table extraction from scanned reports. In Proc. of ICDAR, 2020.",
    "W. Larsen. Evidence attribution for QA. In Proc. of EACL, 2023.",
    "K. Sato and J. Rivera. Measuring answer faithfulness in long-document QA. In Proc. of ACL, 2022.",
    "C. Moreau. Scientific paper QA with citations. In Proc. of SDP, 2022.",
    "I. Petrov et al. Mixture of retrievers. In Proc. of EMNLP, 2023.",
    "B. Ahmed. Token budgets for retrieval. In Proc. of COLING, 2022.",
    "Q. Wang and R. Das. Hierarchical page indexes. In Proc. of CIKM, 2023.",
    "V. Kowalski. Document structure priors. In Proc. of DocEng, 2021.",
    "O. Lindgren. Clinical protocol analysis with LLMs. In Proc. of BioNLP, 2023.",
    "A. Romero et al. Multilingual document QA. In Proc. of EMNLP, 2022.",
]


def build_scientific(path):
    b = Builder(body_font="tiro", body_size=9.5, margins=(56, 64, 56, 64),
                header=lambda i, n: ("SPARK: Sparse Page Retrieval for Long-Document QA", "Preprint, May 2024"),
                footer=lambda i, n: (None, str(i)))
    pr = Prose("science", 505)
    heads = ["Setup", "Discussion", "Analysis", "Observations"]
    b.y = 80
    for ln in wrap("SPARK: Sparse Page Retrieval for Long-Document Question Answering", 480, "tibo", 17):
        b.text_center(b.W / 2, b.y + 17, ln, "tibo", 17)
        b.y += 22
    b.y += 6
    b.text_center(b.W / 2, b.y + 10, "Lena Hoffmann, Arjun Patel, Mei Tanaka, Oskar Berg", "tiro", 10.5)
    b.y += 16
    b.text_center(b.W / 2, b.y + 10, "Institute for Document Intelligence, Lindenburg", "tiit", 9.5)
    b.y += 26
    b.text_center(b.W / 2, b.y + 10, "Abstract", "tibo", 10)
    b.y += 16
    b.para("Question answering over documents of hundreds of pages remains difficult: long-context models "
           "dilute their attention, and dense retrievers miss pages whose relevance depends on tables and "
           "layout. We present SPARK, which combines a sparse page index with a layout-aware page reranker. "
           "On three benchmarks SPARK improves accuracy by 3.7 to 4.9 points over the strongest baseline "
           "while reading fewer tokens.", size=9, indent=30, marks={"abs": "by 3.7 to 4.9 points"})
    b.y += 4
    b.begin_columns()
    b.heading("1 Introduction", 2)
    add_paras(b, pr, 30)
    b.heading("2 Related work", 2)
    for k in range(14):
        r1, r2 = (k * 3) % 24 + 1, (k * 5 + 2) % 24 + 1
        if 17 in (r1, r2):
            r1 = r1 + 1 if r1 == 17 else r1
            r2 = r2 + 1 if r2 == 17 else r2
        b.para(pr.paragraph(2, 4) + f" Prior work [{r1}, {r2}] studied related settings.")
    b.heading("3 Method", 2)
    add_paras(b, pr, 12)
    _spark_diagram(b)
    add_paras(b, pr, 30)
    b.heading("4 Experimental setup", 2)
    b.para("We evaluate on three benchmarks whose statistics are given in Table 1.")
    b.table("Table 1: Benchmark statistics", ["Benchmark", "Docs", "Questions", "Avg pages"],
            [["LongDocQA", "1,204", "3,870", "143"], ["FinPages", "512", "2,210", "212"],
             ["LegalLens", "388", "1,630", "187"]], [0.34, 0.2, 0.26, 0.2], size=7.5, grid=True,
            anchors={"t1_long": (0, 2), "t1_fin": (1, 2), "t1_legal": (2, 2), "t1_legal_docs": (2, 1)},
            caption_anchor="t1", font="tiro")
    b.para("Answers are scored with exact match after normalisation. We follow the evaluation protocol "
           "of [17] for answer faithfulness.", marks={"cite17": "the evaluation protocol"})
    add_paras(b, pr, 30)
    b.heading("5 Results", 2)
    b.para("Table 2 reports accuracy on the three benchmarks.")
    b.table("Table 2: Accuracy (%) on the three benchmarks", ["Method", "LongDocQA", "FinPages", "LegalLens"],
            [[m] + [f"{v:.1f}" for v in vals] for m, vals in SCI_METHODS], [0.37, 0.21, 0.21, 0.21],
            size=7, grid=True, bold_rows=(4,), font="tiro",
            anchors={f"t2_{i}_{j}": (i, j + 1) for i in range(5) for j in range(3)}, caption_anchor="t2")
    add_paras(b, pr, 18)
    b.line_chart("Figure 3: Accuracy by document length (pages), LongDocQA", SCI_LEN,
                 [("SPARK", SCI_LEN_SPARK, (0.1, 0.3, 0.7), None),
                  ("Full-context LLM", SCI_LEN_FULL, (0.7, 0.3, 0.1), "[3 2] 0")],
                 key="fig3", ylabel="Accuracy (%)", ymin=0, ymax=70, ystep=10, xlabel="Document length (pages)",
                 label_points=True, height=200, size=6.5, cap_font="tibo")
    add_paras(b, pr, 24)
    b.heading("5.2 Ablation", 3, toc=False)
    b.table("Table 4: Ablation on LongDocQA (accuracy, %)", ["Variant", "Accuracy"],
            [list(r) for r in SCI_ABL], [0.7, 0.3], size=7.5, grid=True, font="tiro",
            anchors={f"abl_{i}": (i, 1) for i in range(5)} | {"abl_rr": (2, 0)}, caption_anchor="t4")
    b.heading("5.3 Efficiency", 3, toc=False)
    b.bar_chart("Figure 4: Tokens read per question (thousands)", ["Full ctx", "BM25", "Dense", "ColPali", "SPARK"],
                [182.4, 12.8, 14.1, 9.6, 8.7], key="fig4", ylabel="Tokens (k)", ymax=200, ystep=50,
                height=170, size=6.5, cap_font="tibo")
    add_paras(b, pr, 18)
    b.heading("6 Case study: a clinical protocol", 2)
    b.para("We applied SPARK to protocol VLX-301, a 36-page clinical study protocol. Asked for the planned "
           "enrolment, SPARK retrieved the synopsis page and answered with the planned sample size of "
           "540 participants, which it attributed to the synopsis.", marks={"case540": "540 participants"})
    add_paras(b, pr, 18)
    b.heading("7 Limitations", 2)
    add_paras(b, pr, 18)
    b.heading("8 Conclusion", 2)
    add_paras(b, pr, 18)
    fill(b, pr, b.pno if b.col == 0 else b.pno)
    b.end_columns()
    b.columns = 1
    b.page_break()
    b.heading("References", 2)
    b.begin_columns()
    for i, r in enumerate(SCI_REFS, start=1):
        b.para(f"[{i}] {r}", size=8.5, marks={"ref17": "K. Sato and J. Rivera"} if i == 17 else None)
    b.heading("A Hyperparameters", 2)
    b.table("Table 5: Hyperparameters", ["Parameter", "Value"],
            [["Pages retrieved (top-k)", "8"], ["Sparse index vocabulary", "250,000"],
             ["Reranker layers", "6"], ["Learning rate", "2e-5"], ["Batch size", "32"],
             ["Training epochs", "3"]], [0.65, 0.35], size=7.5, grid=True, font="tiro")
    add_paras(b, pr, 30)
    b.end_columns()
    _drop_trailing(b)
    n = b.save(path, {"title": "SPARK: Sparse Page Retrieval for Long-Document Question Answering",
                      "author": "Lena Hoffmann; Arjun Patel; Mei Tanaka; Oskar Berg"})
    return b.anchors, n, b.toc


def _spark_diagram(b):
    b.ensure(190)
    x0, y0 = b.cx, b.y + 4
    W = b.cw
    bx = [("Query", "rewriter"), ("Sparse", "page index"), ("Layout-aware", "reranker"), ("Reader", "LLM")]
    bw, gap = 44, (W - 4 * 44) / 3
    for i, (a, c) in enumerate(bx):
        xx = x0 + i * (bw + gap)
        b.box((xx, y0 + 40, xx + bw, y0 + 90), [a, c], size=6.5, bold_first=True)
        if i < 3:
            b.arrow((xx + bw, y0 + 65), (xx + bw + gap, y0 + 65))
    b.box((x0 + bw + gap - 6, y0 + 120, x0 + 2 * bw + gap + 6, y0 + 150), ["Document", "pages"], size=6.5,
          fill=(1, 1, 1))
    b.arrow((x0 + 1.5 * bw + gap, y0 + 120), (x0 + 1.5 * bw + gap, y0 + 90))
    b.text_center(x0 + W / 2, y0 + 20, "top-k = 8 pages", size=6.5)
    bbox = (x0, y0, x0 + W, y0 + 160)
    b.y = y0 + 166
    b._figure_caption("Figure 1: Overview of the SPARK pipeline", "fig1", 8, x0, W, bbox, "tibo")


# ====================================================================================
# 6. narrative_literature: short novel excerpt
# ====================================================================================
def build_narrative(path):
    b = Builder(body_font="tiro", body_size=10.5, margins=(54, 60, 54, 64), page_size=(432.0, 648.0),
                header=lambda i, n: ("THE LIGHTHOUSE AT CARROW POINT", None),
                footer=lambda i, n: (None, str(i)), lead=1.45)
    b.no_chrome = {1}
    pr = Prose("narrative", 606)
    b.text_center(216, 200, "The Lighthouse", "tibo", 24)
    b.text_center(216, 230, "at Carrow Point", "tibo", 24)
    b.text_center(216, 290, "Edith Marlowe", "tiro", 14)
    b.text_center(216, 330, "Chapters One to Four", "tiit", 11)
    b.text_center(216, 560, "First published 1931 by Harrowgate & Lane, London", "tiro", 8.5)
    b.new_page()
    chapters = [
        ("Chapter One", [
            ("Thomas Renshaw came to Carrow Point on the third of November, with a canvas bag and a letter "
             "of appointment from the Board.", {"arrive": "on the third of November"}),
            ("The keeper, Abel Quayle, met him at the foot of the path with his dog, a rough-coated terrier "
             "called Bosun, who decided at once that Thomas could be trusted.",
             {"dog": "a rough-coated terrier called Bosun", "quayle": "The keeper, Abel Quayle,"})], 5),
        ("Chapter Two", [
            ("The storm came on the ninth and did not lift for three days. The supply boat Merrow was four "
             "days late, and they lived on salt fish and the last of the potatoes.",
             {"merrow": "Merrow was four days late"}),
            ("A letter from his sister Alice in Penzance came with the boat at last; Thomas read it twice "
             "and put it inside his Bible.", None)], 10),
        ("Chapter Three", [
            ("In the grey before dawn they saw the schooner Clara Vane driven onto the Skerries.",
             {"wreck": "the schooner Clara Vane"}),
            ("Of the seven men aboard the Clara Vane, five were brought ashore alive; the cook and the "
             "mate were never found.", {"crew": "five were brought ashore alive", "crew7": "Of the seven men aboard"})],
         15),
        ("Chapter Four", [
            ("That evening Thomas read the entry in the log in the keeper's square hand: 17th November. Lamp "
             "out forty minutes, paraffin exhausted. A.Q.", {"log": "paraffin exhausted. A.Q."}),
            ("He left Carrow Point on the twenty-ninth of November, and did not look back until the boat "
             "had rounded the headland.", {"leave": "on the twenty-ninth of November"})], 20),
    ]
    for title, facts, last_page in chapters:
        b.y = b.mt + 40
        b.text_center(b.W / 2, b.y, title, "tibo", 15)
        b.toc.append((1, title, b.pno))
        b.anchor(f"ch_{title.split()[1].lower()}", title)
        b.y += 30
        b.para(facts[0][0], marks=facts[0][1], first_indent=0)
        add_paras(b, pr, 3)
        b.para(facts[1][0], marks=facts[1][1])
        fill(b, pr, last_page)
    _drop_trailing(b)
    n = b.save(path, {"title": "The Lighthouse at Carrow Point (Chapters One to Four)", "author": "Edith Marlowe"})
    return b.anchors, n, b.toc


DOCS = [
    {"key": "fin", "document_id": "doc_000001", "build": build_finance,
     "title": "Northwind Harbour Group plc Annual Report and Accounts 2023", "domain": "finance_business",
     "url": "https://www.northwind-harbour.example/investors/reports/nhg-annual-report-2023.pdf",
     "source_host": "www.northwind-harbour.example", "doc_type": "annual_report", "coarse": "report"},
    {"key": "med", "document_id": "doc_000002", "build": build_medical,
     "title": "VLX-301 Clinical Study Protocol, Version 3.0", "domain": "medical_clinical",
     "url": "https://trials.halden-therapeutics.example/protocols/VLX-301_protocol_v3.0.pdf",
     "source_host": "trials.halden-therapeutics.example", "doc_type": "clinical_protocol", "coarse": "protocol"},
    {"key": "leg", "document_id": "doc_000003", "build": build_legal,
     "title": "Regulation (RX) 2023/117 on the safety of inland waterway vessels", "domain": "legal_regulation",
     "url": "https://oj.riverine-union.example/L311/2023-117_en.pdf",
     "source_host": "oj.riverine-union.example", "doc_type": "regulation", "coarse": "legal"},
    {"key": "tec", "document_id": "doc_000004", "build": build_technical,
     "title": "HX-400 Series Plate Heat Exchangers: Installation, Operation and Maintenance Manual",
     "domain": "technical_engineering",
     "url": "https://docs.kestrel-thermal.example/manuals/KTS-IOM-HX400-EN_RevD.pdf",
     "source_host": "docs.kestrel-thermal.example", "doc_type": "technical_manual", "coarse": "manual"},
    {"key": "sci", "document_id": "doc_000005", "build": build_scientific,
     "title": "SPARK: Sparse Page Retrieval for Long-Document Question Answering", "domain": "scientific_academic",
     "url": "https://preprints.example.org/2405.01234v1.pdf",
     "source_host": "preprints.example.org", "doc_type": "research_paper", "coarse": "paper"},
    {"key": "nar", "document_id": "doc_000006", "build": build_narrative,
     "title": "The Lighthouse at Carrow Point (Chapters One to Four)", "domain": "narrative_literature",
     "url": "https://library.example.net/texts/marlowe-lighthouse-carrow-point-ch1-4.pdf",
     "source_host": "library.example.net", "doc_type": "novel", "coarse": "book"},
]
