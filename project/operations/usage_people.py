"""The distinct signed-in people a route's tallies saw (project/operations/usage.py), mergeable across
processes and buckets without keeping anyone's id."""

from __future__ import annotations

import hashlib
import math

# The people seen: their 8-byte hashes while at most PEOPLE_EXACT_MAX (exact), past that a
# HyperLogLog of 512 one-byte registers (4.6% standard error), so that processes' and
# buckets' sets merge without keeping ids, in at most about 1 KB an item.
PEOPLE_EXACT_MAX = 128
PEOPLE_REGISTERS = 512
_INDEX_BITS = 9


def person_hash(user_id: object) -> int:
    return int.from_bytes(hashlib.blake2b(str(user_id).encode(), digest_size=8).digest(), "big")


class People:
    """Distinct signed-in people: exact while few, estimated (HyperLogLog) past PEOPLE_EXACT_MAX."""

    def __init__(self) -> None:
        self.hashes: set[int] = set()
        self.registers: bytearray | None = None

    def add(self, hashed: int) -> None:
        if self.registers is not None:
            _register_add(self.registers, hashed)
            return
        self.hashes.add(hashed)
        if len(self.hashes) > PEOPLE_EXACT_MAX:
            self.registers = bytearray(PEOPLE_REGISTERS)
            for known in self.hashes:
                _register_add(self.registers, known)
            self.hashes = set()

    def merge(self, other: People) -> None:
        for hashed in other.hashes:
            self.add(hashed)
        if other.registers is not None:
            if self.registers is None:
                self.registers = bytearray(other.registers)
                for known in self.hashes:
                    _register_add(self.registers, known)
                self.hashes = set()
            else:
                for index, rank in enumerate(other.registers):
                    if rank > self.registers[index]:
                        self.registers[index] = rank

    def count(self) -> int:
        if self.registers is None:
            return len(self.hashes)
        return _estimate(self.registers)

    def encode(self) -> bytes | None:
        """`x` + the hashes, or `h` + the registers; None for nobody."""
        if self.registers is not None:
            return b"h" + bytes(self.registers)
        if not self.hashes:
            return None
        return b"x" + b"".join(hashed.to_bytes(8, "big") for hashed in sorted(self.hashes))

    @classmethod
    def decode(cls, data: bytes | None) -> People:
        found = cls()
        if data and data[:1] == b"h" and len(data) == 1 + PEOPLE_REGISTERS:
            found.registers = bytearray(data[1:])
        elif data and data[:1] == b"x":
            found.hashes = {int.from_bytes(data[at : at + 8], "big") for at in range(1, len(data) - 7, 8)}
        return found

    def copy(self) -> People:
        found = People()
        found.hashes = set(self.hashes)
        found.registers = None if self.registers is None else bytearray(self.registers)
        return found


def _register_add(registers: bytearray, hashed: int) -> None:
    index = hashed & (PEOPLE_REGISTERS - 1)
    rest = hashed >> _INDEX_BITS
    rank = (64 - _INDEX_BITS) - rest.bit_length() + 1  # leading zeros of the other 55 bits, plus one
    if rank > registers[index]:
        registers[index] = rank


def _estimate(registers: bytearray) -> int:
    """HyperLogLog's estimate, by the empty registers (linear counting) while many are empty."""
    m = len(registers)
    zeros = registers.count(0)
    raw = (0.7213 / (1 + 1.079 / m)) * m * m / sum(2.0**-rank for rank in registers)
    if raw <= 2.5 * m and zeros:
        return round(m * math.log(m / zeros))
    return round(raw)
