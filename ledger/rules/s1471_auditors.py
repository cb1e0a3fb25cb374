"""QAP auditors (§80.1471): who verifies a batch under a quality assurance plan, and what that
independence forbids.

An independent third-party auditor verifies RINs under a QAP (§80.1469, audited per §80.1472) and
designates them Q-, A- or B-RINs (§80.1471(e)(1)-(3)); a RIN no auditor verified is
`unverified`. The auditor must not be owned or operated by the producer or an obligated party
((b)(1)-(2)) and must not own, buy, sell or otherwise trade RINs ((b)(3)).
"""

from __future__ import annotations

from collections.abc import Iterable

from ledger.rules.catalogue import Rule

#: the QAP statuses EMTS records (§80.1471(e)(1)-(3)); `unverified` is a RIN no auditor verified
QAP_STATUSES = ("Q", "A", "B")
UNVERIFIED = "unverified"
AUDITOR = "qap_auditor"
#: roles that generate RINs or carry an obligation: an independent auditor is neither
#: (§80.1471(b)(1)-(2))
NOT_INDEPENDENT = frozenset({"producer", "importer", "foreign_producer", "obligated_party",
                             "refiner", "small_refiner", "exporter"})
#: roles that own or trade RINs, which an auditor may not do (§80.1471(b)(3))
RIN_OWNING = frozenset({"blender", "rin_owner", "broker"})

QAP_AUDITOR = Rule(
    "QAP-AUDITOR", "§80.1471(a)",
    "a batch is verified under a QAP only by a party registered as a qap_auditor",
)
QAP_INDEPENDENT = Rule(
    "QAP-INDEPENDENT", "§80.1471(b)(1)-(2)",
    "a qap_auditor is not the producer of the batch it verifies, and does not register as a "
    "producer, importer, refiner, exporter or obligated party",
)
QAP_NO_RINS = Rule(
    "QAP-NO-RINS", "§80.1471(b)(3)",
    "a qap_auditor owns no RINs: it registers with no RIN-owning role, and no transfer, sell, "
    "buy or generation gives it any",
)
QAP_STATUS = Rule(
    "QAP-STATUS", "§80.1471(e)",
    "a block named by code whose selector gives `qap` must have that QAP status (Q, A, B or "
    "unverified), exactly",
)
RULES = (QAP_AUDITOR, QAP_INDEPENDENT, QAP_NO_RINS, QAP_STATUS)


def check_registration(roles: Iterable[str]) -> None:
    """§80.1471(b): a qap_auditor registers as nothing that produces, is obligated or owns RINs."""
    given = set(roles)
    if AUDITOR not in given:
        return
    dependent = sorted(given & NOT_INDEPENDENT)
    QAP_INDEPENDENT.check(
        not dependent,
        f"a qap_auditor must be independent; it cannot also register as {', '.join(dependent)}",
        "roles",
    )
    owning = sorted(given & RIN_OWNING)
    QAP_NO_RINS.check(
        not owning, f"a qap_auditor may not own RINs; it cannot also register as "
        f"{', '.join(owning)}", "roles",
    )


def check_auditor(party: str, roles: Iterable[str]) -> None:
    """§80.1471(a): only a registered qap_auditor verifies a batch."""
    QAP_AUDITOR.check(
        AUDITOR in set(roles),
        f"party {party} is registered as {', '.join(roles)}, not as a qap_auditor", "party",
    )


def check_independent(auditor: str, generator: str, batch: str) -> None:
    """§80.1471(b)(1): an auditor never verifies a batch it generated itself."""
    QAP_INDEPENDENT.check(
        auditor != generator,
        f"party {auditor} generated batch {batch}; its own batch needs an independent auditor",
        "party",
    )


def check_receiver(party: str, roles: Iterable[str], field: str) -> None:
    """§80.1471(b)(3): nothing gives RINs to a qap_auditor."""
    QAP_NO_RINS.check(
        AUDITOR not in set(roles),
        f"party {party} is a qap_auditor, which may not own, buy or otherwise trade RINs",
        field,
    )


def check_status(code: str, status: str, wanted: str | None, field: str) -> None:
    """§80.1471(e): a selector's `qap` matches the batch's status exactly."""
    QAP_STATUS.check(
        wanted is None or status == wanted,
        f"{code} is {status}, not {wanted}", field,
    )
