"""A party's EMTS submissions written as an EMTS 3.0 XML document (reference.md §8): root `EMTS`
in the schema's namespace, the submittal header, then one block per submission with its
elements in the schema's order. `emts.xsd` beside this module is the schema of that subset.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

NAMESPACE = "http://www.exchangenetwork.net/schema/emts/3"
SCHEMA_FILE = Path(__file__).with_name("emts.xsd")
_TRADE = ["TransactionPartnerOrganizationIdentifier", "TransactionPartnerOrganizationName",
          "RINQuantity", "BatchVolume", "FuelCode", "AssignmentCode", "RINYear",
          "QAPServiceTypeCode", "{side}ReasonCode", "RINPriceAmount", "GallonPriceAmount",
          "TransferDate", "PTDNumber", "MatchingTransactionIdentifier", "sources"]
#: each block's elements in the schema's order; `sources` and `feedstocks` are the repeated
#: originating-source and feedstock details
ORDER: dict[str, list[str]] = {
    "GenerateTransactionDetail": [
        "RINQuantity", "BatchVolume", "FuelCode", "FuelCategoryCode", "ProductionDate",
        "ProcessCode", "QAPServiceTypeCode", "EquivalenceValue", "sources", "feedstocks"],
    "SeparateTransactionDetail": [
        "RINQuantity", "BatchVolume", "FuelCode", "RINYear", "QAPServiceTypeCode",
        "SeparateReasonCode", "TransactionDate", "sources"],
    "SellTransactionDetail": [name.format(side="Sell") for name in _TRADE],
    "BuyTransactionDetail": [name.format(side="Buy") for name in _TRADE],
    "RetireTransactionDetail": [
        "RINQuantity", "BatchVolume", "FuelCode", "AssignmentCode", "RINYear",
        "QAPServiceTypeCode", "RetireReasonCode", "TransactionDate", "ComplianceYear",
        "sources"],
}
#: the originating-source detail's element name per block
SOURCE = {"GenerateTransactionDetail": "GenerateOriginatingSourceDetail",
          "SeparateTransactionDetail": "SeparateOriginatingSourceDetail",
          "RetireTransactionDetail": "RetireOriginatingSourceDetail"}
SOURCE_FIELDS = ("GenerateOrganizationIdentifier", "GenerateFacilityIdentifier",
                 "BatchNumberText")
FEEDSTOCK_FIELDS = ("FeedstockCode", "RenewableBiomassIndicator", "FeedstockQuantity")


def tag(name: str) -> str:
    return f"{{{NAMESPACE}}}{name}"


def child(parent: ET.Element, name: str, value: Any) -> None:
    """`<name>value</name>` under `parent`; nothing for a missing value."""
    if value is None:
        return
    text = ("Y" if value else "N") if isinstance(value, bool) else str(value)
    ET.SubElement(parent, tag(name)).text = text


def block_element(parent: ET.Element, block: str, fields: dict[str, Any]) -> None:
    element = ET.SubElement(parent, tag(block))
    for name in ORDER[block]:
        if name == "sources":
            for source in fields.get("sources", ()):
                detail = ET.SubElement(element, tag(SOURCE.get(block, "OriginatingSourceDetail")))
                for field, value in zip(SOURCE_FIELDS, source, strict=True):
                    child(detail, field, value)
        elif name == "feedstocks":
            for feedstock in fields.get("feedstocks", ()):
                detail = ET.SubElement(element, tag("FeedstockDetail"))
                for field, value in zip(FEEDSTOCK_FIELDS, feedstock, strict=True):
                    child(detail, field, value)
        else:
            child(element, name, fields.get(name))


def document(party: str, created: date, rows: Sequence[dict[str, Any]], comment: str) -> bytes:
    """The submission document: header, then each row's block (`block`, `fields`) in order."""
    ET.register_namespace("", NAMESPACE)
    root = ET.Element(tag("EMTS"))
    child(root, "UserLoginText", "rin-ledger")
    child(root, "SubmittalCreationDate", created.isoformat())
    child(root, "OrganizationIdentifier", party)
    child(root, "SubmittalCommentText", comment)
    for row in rows:
        block_element(root, row["block"], row["fields"])
    ET.indent(root)
    written: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return written + b"\n"
