"""The special function unit's interpolator and the functions it computes from float32
bits alone: ``MUFU.RCP``, ``MUFU.RSQ``, ``MUFU.SQRT``, ``MUFU.EX2``, ``MUFU.LG2``,
``MUFU.SIN`` and ``MUFU.COS``, bit for bit as the H200 computes them.

Each is a quadratic interpolation in fixed point (the multifunction interpolator Oberman and
Siu described, whose arithmetic envytools reverse engineered on G80's SFU): the high bits of
the argument's significand pick a segment, whose three integer coefficients are summed
against the low bits ``x`` and a truncated square of them, and the sum's high bits are the
result's significand. Sources are flushed (a denormal is a zero of its sign) and so are
results; a NaN result is 0x7fffffff.

The coefficients below were fitted to what the H200 computed on every argument of each
table's domain (tests/data/trace/mufu: ``rcp.approx.ftz`` on the 2^23 significands of [1, 2),
``rsqrt.approx.ftz`` and ``sqrt.approx.ftz`` on the 2^24 floats of [1, 4), ``ex2.approx.ftz``
on the 2^24 multiples of 2^-23 in (-1, 1), ``lg2.approx.ftz`` on the 2^23 significands of
[1, 2); ``sin.approx.ftz`` and ``cos.approx.ftz``, which share a table, on 2^18 random
bit patterns each): per segment, integers that give every one of its
outputs. The functions here give all those outputs, and those of 2^18 random bit patterns
of each with the special values. ``MUFU.SQRT`` has a table of its own (it is not
``x * rsqrt(x)``, and its linear term is a bit wider than RSQ's). ``TANH`` is in
:mod:`.tanh`, the double seeds ``RCP64H`` and ``RSQ64H`` in :mod:`.seeds`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_U = np.uint32
_I = np.int64
NAN = 0x7FFFFFFF  # the float32 NaN the GPU writes, whatever went in (ops/floating.NAN32)

# (c0, c1, c2) per segment, hexadecimal: 128 segments of RCP (the significand's bits 22..16),
# of RSQ and SQRT (the exponent's parity, then bits 22..17), 64 of EX2 (the fraction's bits
# 22..17 in 7.23 fixed point)
_TABLES = {
    "RCP": """
3fffffe -fffe 3f5 3f80fe0 -fc0a 3dd 3f03f04 -f82d 3c6 3e88cb3 -f467 3b1 3e0f83c -f0b6 39b
3d980f6 -ed1b 386 3d22636 -e995 373 3cae758 -e622 35f 3c3c3c2 -e2c3 34d 3bcbadc -df77 33b
3b5cc0f -dc3d 329 3aef6c9 -d914 317 3a83a83 -d5fd 306 3a196b2 -d2f7 2f6 39b0ad1 -d001 2e6
3949660 -cd1b 2d7 38e38e3 -ca44 2c7 387f1e0 -c77c 2b8 381c0e0 -c4c3 2aa 37ba570 -c218 29d
3759f21 -bf7b 290 36fad87 -bceb 282 369d035 -ba69 277 36406c8 -b7f3 26a 35e50d7 -b589 25d
358ae04 -b32c 252 3531dec -b0da 246 34da034 -ae94 23c 3483484 -ac59 231 342da7f -aa28 225
33d91d3 -a803 21c 3385a29 -a5e7 211 3333333 -a3d6 207 32e1c9f -a1cf 1fe 329161e -9fd1 1f5
3241f69 -9ddc 1ea 31f3831 -9bf1 1e2 31a6032 -9a0f 1da 3159722 -9835 1d1 310dcbf -9664 1c9
30c30c3 -949b 1c1 30792ef -92da 1b9 3030303 -9121 1b1 2fe80c0 -8f70 1aa 2fa0be8 -8dc6 1a2
2f5a441 -8c24 19c 2f14990 -8a88 193 2ecfb9c -88f4 18d 2e8ba2f -8767 186 2e4850f -85e0 17f
2e05c0a -8460 179 2dc3eee -82e7 173 2d82d83 -8174 16e 2d4279a -8006 166 2d02d02 -7e9f 161
2cc3d8c -7d3e 15c 2c8590b -7be2 155 2c47f50 -7a8d 151 2c0b02c -793c 14b 2bceb76 -77f1 146
2b93105 -76ab 140 2b580ae -756b 13c 2b1da47 -742f 136 2ae3da7 -72f8 131 2aaaaaa -71c7 12e
2a7212a -709a 129 2a3a0fe -6f71 123 2a02a02 -6e4d 11f 29cbc15 -6d2e 11b 2995710 -6c13 117
295fad4 -6afc 112 292a73d -69ea 10f 28f5c29 -68db 10a 28c1979 -67d1 107 288df0c -66ca 102
285acc4 -65c8 100 2828283 -64c9 fb 27f6028 -63ce f8 27c4598 -62d6 f3 27932b4 -61e2 f0
2762762 -60f2 ed 2732386 -6005 e9 2702703 -5f1c e7 26d31bf -5e35 e2 26a439f -5d52 df 2675c8b
-5c73 de 2647c69 -5b96 da 261a320 -5abc d6 25ed098 -59e6 d4 25c04b9 -5912 d0 2593f69 -5841
cd 2568096 -5774 cc 253c825 -56a8 c7 2511602 -55e0 c5 24e6a17 -551b c4 24bc44e -5458 c1
2492492 -5397 bd 2468acf -52d9 ba 243f6f1 -521e b8 24168e1 -5165 b6 23ee090 -50af b4 23c5de7
-4ffb b2 239e0d5 -4f49 af 2376948 -4e9a ad 234f72c -4ded ab 2328a6f -4d42 a9 2302302 -4c99
a6 22dc0d1 -4bf3 a5 22b63cc -4b4e a1 2290be2 -4aac a0 226b902 -4a0c 9f 2246b1d -496d 9b
2222222 -48d1 9a 21fde02 -4837 99 21d9ead -479e 96 21b6416 -4708 95 2192e2a -4673 93 216fcdd
-45e0 91 214d022 -454f 8f 212a7e6 -44c0 8f 2108421 -4432 8c 20e64c2 -43a6 8a 20c49bb -431c
89 20a32ff -4293 87 2082082 -420c 85 2061237 -4187 84 204080f -4103 83 2020201 -4081 82
""",
    "RSQ": """
3fffffd -fffb 2f2 3f817ad -fa18 2d5 3f05d8f -f46f 2ba 3e8cfe3 -eefb 2a0 3e16d08 -e9bb 288
3da336d -e4ab 271 3d32199 -dfc9 25b 3cc3625 -db13 246 3c56fbb -d687 232 3becd12 -d222 21f
3b84cf4 -cde4 20e 3b1ee3f -c9c9 1fc 3abafd2 -c5d1 1ec 3a590a6 -c1fa 1dc 39f8fb3 -be42 1cd
399ac08 -baa8 1be 393e4b6 -b72b 1b1 38e38e3 -b3ca 1a4 388a7b0 -b082 197 3833055 -ad54 18b
37dd20a -aa3e 17f 3788c11 -a73f 174 3735db5 -a457 16a 36e4649 -a184 160 3694525 -9ec5 156
36459ab -9c1a 14c 35f833b -9982 143 35ac144 -96fc 13a 3561336 -9487 131 3517888 -9224 12a
34cf0b4 -8fd0 122 3487b40 -8d8d 11b 34417ae -8b58 113 33fc587 -8932 10c 33b8456 -871a 106
33753b4 -850f ff 3333333 -8311 f8 32f226c -8120 f2 32b20fe -7f3b ec 3272e85 -7d62 e7 3234aac
-7b94 e1 31f7512 -79d1 dc 31bad67 -7819 d7 317f355 -766b d2 314468b -74c7 cd 310a6ba -732d
c9 30d139a -719c c4 3098cdc -7013 bf 306123e -6e94 bb 302a377 -6d1d b7 2ff4047 -6bae b3
2fbe86e -6a48 b0 2f89bad -68e9 ac 2f559c5 -6791 a8 2f2227d -6641 a5 2eef59a -64f8 a2 2ebd2e8
-63b5 9e 2e8ba2f -6279 9a 2e5ab3a -6144 97 2e2a5d5 -6015 94 2dfa9d0 -5eec 91 2dcb6f8 -5dc9
8f 2d9cd26 -5cac 8c 2d6ec25 -5b94 89 2d413c9 -b501 215 2ce7c62 -b0d8 201 2c905a6 -acd7 1ed
2c3ae55 -a8fc 1db 2be754a -a546 1cb 2b9596c -a1b1 1ba 2b459b1 -9e3e 1ab 2af7514 -9ae9 19c
2aaaaaa -97b2 18e 2a5f987 -9496 180 2a160d5 -9196 173 29cdfbd -8eaf 167 298757d -8be1 15c
2942152 -8929 150 28fe287 -8688 146 28bb875 -83fd 13c 287a26b -8185 132 2839fd1 -7f21 129
27fb010 -7cd0 120 27bd291 -7a90 117 27806c9 -7861 10f 2744c37 -7643 107 270a257 -7435 100
26d08af -7235 f8 2697ec7 -7044 f1 266042e -6e61 eb 2629879 -6c8c e5 25f3b40 -6ac3 de 25bec17
-6907 d9 258aaa6 -6756 d2 2557687 -65b1 cd 2524f67 -6417 c7 24f34e7 -6288 c3 24c26bc -6103
be 2492493 -5f88 b9 2462e1a -5e16 b4 243430a -5cae b0 2406319 -5b4e ab 23d8e02 -59f7 a7
23ac382 -58a9 a3 2380354 -5762 9f 2354d3d -5623 9b 232a0fd -54ec 98 22ffe5d -53bc 94 22d651e
-5293 91 22ad50e -5171 8e 2284df7 -5055 8a 225cf9f -4f40 88 22359db -4e31 85 220ec79 -4d28
82 21e874a -4c24 7e 21c2a1d -4b27 7c 219d4c6 -4a2f 7a 217871f -493c 77 21540f6 -484e 75
213022c -4765 72 210ca93 -4681 70 20e9a08 -45a2 6e 20c7067 -44c7 6b 20a4d88 -43f1 69 208314a
-431f 67 2061b89 -4251 65 2040c27 -4187 63 2020307 -40c2 61
""",
    "SQRT": """
2000000 ffff -1fa 203fc08 fe05 -1ee 207f03f fc16 -1e2 20bdcd2 fa33 -1d8 20fc1ed f85a -1cd
2139fba f68c -1c4 2177661 f4c8 -1bb 21b460a f30d -1b2 21f0eda f15b -1a8 222d0f5 efb3 -1a1
2268c7f ee13 -198 22a419a ec7b -18f 22df067 eaeb -187 2319904 e964 -181 2353b92 e7e3 -178
238d82d e66b -172 23c6ef3 e4f9 -16b 2400000 e38e -165 2438b6e e22a -15f 2471158 e0cc -158
24a91d7 df74 -151 24e0d04 de23 -14c 25182f7 dcd7 -145 254f3c7 db91 -13f 2585f8b da51 -13b
25bc659 d916 -135 25f2846 d7e0 -130 2628566 d6b0 -12b 265ddcf d584 -126 2693193 d45e -122
26c80c6 d33c -11d 26fcb7b d21e -118 27311c2 d106 -115 27653b0 cff1 -110 2799153 cee1 -10c
27ccabe cdd5 -109 2800000 cccd -105 283312a cbc8 -ff 2865e4a cac8 -fc 2898770 c9cc -f9
28cacac c8d2 -f4 28fce0b c7dd -f2 292eb9b c6eb -ee 296056a c5fd -ec 2991b86 c511 -e7 29c2dfb
c42a -e5 29f3cd7 c345 -e2 2a24827 c263 -de 2a54ff5 c185 -dd 2a8544f c0a9 -d9 2ab5540 bfd0
-d6 2ae52d3 befa -d3 2b14d15 be26 -cf 2b4440e bd57 -cf 2b737cc bc88 -ca 2ba2857 bbbd -c8
2bd15ba baf5 -c7 2c00000 ba2e -c2 2c2e732 b96b -c2 2c5cb5a b8a9 -be 2c8ac81 b7ea -bc 2cb8ab0
b72e -bb 2ce65f2 b673 -b8 2d13e4e b5bb -b6 2d413cd 16a08 -2ca 2d9b658 1673c -2b9 2df4dd4
16482 -2ac 2e4da83 161d6 -29c 2ea5ca2 15f3a -28f 2efd46c 15cac -281 2f5421a 15a2c -272
2faa5e4 157ba -265 3000000 15554 -257 30550a0 152fc -24c 30a97f6 150b0 -241 30fd633 14e70
-237 3150b85 14c3a -22a 31a3818 14a10 -220 31f5c18 147f0 -213 32477b0 145dc -20c 3298b08
143d0 -200 32e9646 141d0 -1f9 3339993 13fd8 -1f0 3389513 13de8 -1e4 33d88ea 13c02 -1dc
3427539 13a26 -1d6 3475a26 13850 -1cb 34c37ce 13684 -1c5 3510e53 134be -1bb 355ddd3 13302
-1b7 35aa66d 1314c -1af 35f683e 12f9e -1a9 3642363 12df6 -1a1 368d7f8 12c54 -198 36d8617
12aba -191 3722ddb 12928 -18f 376cf5d 1279a -187 37b6ab7 12612 -17f 3800000 12492 -17b
3848f51 12316 -174 38918c0 121a2 -172 38d9c64 12032 -16c 3921a54 11ec6 -164 39692a3 11d62
-161 39b0568 11c02 -15c 39f72b8 11aa6 -155 3a3daa4 11950 -150 3a83d42 117fe -14a 3ac9aa4
116b2 -147 3b0f2dd 1156a -143 3b545fe 11426 -13d 3b9941a 112e8 -13c 3bddd42 111ac -135
3c22187 11076 -132 3c660f9 10f44 -12f 3ca9baa 10e14 -129 3ced1a7 10cea -126 3d30302 10bc4
-125 3d72fc9 10aa0 -11f 3db580b 10980 -11a 3df7bd6 10866 -11a 3e39b3a 1074c -113 3e7b643
10638 -111 3ebcd00 10526 -10d 3efdf7e 10418 -10a 3f3edc9 1030e -108 3f7f7f0 10206 -105
3fbfdfe 10102 -103
""",
    "EX2": """
2000000 58b9 1ee 2059347 59b0 1f5 20b361b 5aaa 1fa 210e8a2 5ba7 1ff 216ab0f 5ca6 206 21c7d86
5da9 209 2226039 5eae 20f 2285356 5fb6 214 22e5709 60c0 21d 2346b7e 61ce 222 23a90e5 62df
227 240c772 63f2 22f 2470f4e 6509 234 24d68ad 6623 238 253d3c0 673f 241 25a50b6 685f 247
260dfc2 6982 24d 2678117 6aa8 254 26e34e6 6bd2 258 274fb67 6cfe 261 27bd4c9 6e2e 267 282c145
6f61 26e 289c10b 7098 273 290d456 71d2 279 297fb5a 730f 281 29f364e 7450 287 2a6856a 7594
28f 2ade8e7 76dc 295 2b560fb 7827 29e 2bcede2 7976 2a5 2c48fd7 7ac8 2ae 2cc4710 7c1f 2b3
2d413cc 7d79 2bb 2dbf648 7ed7 2c1 2e3eebe 8038 2cb 2ebfd6a 819e 2d1 2f4228e 8307 2da 2fc5e67
8474 2e3 304b134 85e5 2ec 30d1b33 875b 2f1 3159ca8 88d4 2fb 31e35d3 8a51 305 326e6f7 8bd3
30b 32fb054 8d59 313 3389230 8ee3 31c 3418ccf 9071 326 34aa076 9204 32d 353cd6a 939b 336
35d13f4 9536 341 3667457 96d6 34a 36feede 987b 351 37983d3 9a24 35a 383337d 9bd1 366 38cfe27
9d84 36d 396e41c 9f3b 377 3a0e5aa a0f7 380 3ab031d a2b7 38d 3b53cc1 a47d 395 3bf92e7 a648
39d 3ca05dd a817 3aa 3d495f5 a9ec 3b2 3df437f abc5 3bf 3ea0ecc ada4 3c9 3f4f831 af88 3d4
""",
    "LG2": """
4 b8a8 -2d7 16e797 b5d1 -2c1 2d75ad b310 -2ad 43ace7 b064 -299 598fe2 adcc -286 6f210f ab47
-273 8462c9 a8d5 -262 995750 a674 -250 ae00d8 a424 -240 c26162 a1e4 -22f d67af5 9fb4 -220
ea4f76 9d93 -212 fde0b9 9b81 -206 111307c 997c -1f8 124407c 9784 -1eb 1371251 9599 -1df
149a786 93ba -1d2 15c01a8 91e7 -1c7 16e2222 9020 -1bd 1800a59 8e63 -1b1 191bbac 8cb2 -1a9
1a33760 8b0a -19e 1b47ebe 896c -194 1c592fb 87d8 -18c 1d6753f 864c -181 1e726aa 84ca -179
1f7a857 8350 -170 207fb52 81df -169 218209f 8076 -162 2281942 7f14 -15a 237e627 7dba -153
247883b 7c67 -14b 257006a 7b1c -146 2664f8d 79d7 -13f 2757682 7898 -137 2847614 7761 -133
2934f0d 762f -12c 2a20233 7503 -125 2b0904a 73de -121 2befa00 72be -11b 2cd4011 71a3 -114
2db632e 708e -10f 2e963fd 6f7e -10a 2f7431d 6e74 -106 305013a 6d6e -101 3129eee 6c6d -fd
3201cc6 6b71 -f9 32d7b5d 6a79 -f4 33abb41 6985 -ee 347dd00 6896 -ea 354e121 67ac -e8 361c823
66c5 -e3 36e9293 65e2 -df 37b40e4 6503 -db 387d398 6428 -d8 3944b1e 6350 -d3 3a0a7ec 627d
-d1 3acea7a 61ac -cc 3b91337 60df -c9 3c52285 6016 -c7 3d118da 5f4f -c3 3dcf690 5e8c -c0
3e8bc12 5dcc -bd 3f469c1 5d0f -ba
""",
    "SIN": """
0 6489 -e 19214e 6482 -30 323ec8 646a -4c 4b547c 6444 -6e 645e94 640d -89 7d5934 63c8 -ab
96407a 6373 -c9 af109c 630e -e5 c7c5ba 629b -106 e05c10 6218 -124 f8cfc8 6186 -142 1111d24
60e5 -160 129405e 6035 -17d 14135ca 5f76 -19a 158f9a2 5ea9 -1b9 170884c 5dcd -1d6 187de2a
5ce2 -1f1 19ef796 5be9 -20d 1b5d0fe 5ae2 -229 1cc66e8 59cd -245 1e2b5d4 58aa -260 1f8ba48
577a -27d 20e70ec 563c -298 223d66c 54f0 -2b0 238e760 5398 -2cb 24da0a8 5232 -2e2 261fefc
50c0 -2fb 275ff44 4f42 -316 2899e5e 4db7 -32c 29cd952 4c21 -347 2afad20 4a7e -35b 2c216e4
48d0 -371 2d413ca 4717 -388 2e5a104 4553 -39e 2f6bbe4 4384 -3b2 30761be 41ab -3c7 3179008
3fc8 -3dc 327444c 3dda -3ec 3367c04 3be4 -401 34534f2 39e4 -413 3536cc0 37db -423 361214e
35c9 -432 36e5064 33b0 -445 37af812 318e -453 3871658 2f65 -463 392a960 2d34 -470 39daf5c
2afc -47c 3a82698 28be -48a 3b20d7a 2679 -494 3bb6274 242f -4a1 3c4241c 21df -4ac 3cc511e
1f89 -4b3 3d3e82c 1d2f -4bd 3dae822 1ad0 -4c4 3e14fda 186e -4ce 3e71e78 1607 -4d4 3ec52fc
139d -4da 3f0eca0 1130 -4df 3f4eab2 ec0 -4e2 3f84c8e c4f -4ea 3fb11b2 9db -4ec 3fd39ba 765
-4ec 3fec43c 4ef -4ef 3ffb10c 278 -4f1
""",
}


def _table(name: str) -> Any:
    words = _TABLES[name].split()
    return np.array([int(w, 16) for w in words], dtype=_I).reshape(-1, 3)


_COEF = {name: _table(name) for name in _TABLES}
#: (a, b, k, s) of each table's sum ``((c0 << a) + c1 * x + (c2 * square << b) + k) >> s``
_SHIFTS = {
    "RCP": (13, 0, 0x47E7, 15),
    "RSQ": (14, 2, 0x7FFF, 16),
    "SQRT": (15, 1, 0x7FFF, 17),
    "EX2": (13, 0, 0x77E2, 15),
    "LG2": (12, 1, 0x3345, 2),
    "SIN": (11, 0, 0, 0),
}
#: per table: ``(c0 << a) + k``, ``c1`` and ``c2 << b`` per segment, and ``s``
_TERMS = {
    name: ((c[:, 0] << a) + k, c[:, 1].copy(), c[:, 2] << b, s)
    for name, c in _COEF.items()
    if name in _SHIFTS
    for a, b, k, s in [_SHIFTS[name]]
}


def _squares(x: Any) -> Any:
    """The interpolator's square of a 17-bit ``x``: for each set bit ``i`` of it, ``x``
    shifted right by ``18 - i`` (the partial products' low bits dropped), summed and halved:
    about ``x * x / 2**19``."""
    total = np.zeros_like(x)
    for i in range(17):
        total += np.where((x >> i) & 1, x >> (18 - i), 0)
    return total >> 1


_SQUARE: list[Any] = []  # _squares of every 17-bit value (1 MiB), made at the first use


def square(x: Any) -> Any:
    """:func:`_squares` of 17-bit values (int64), looked up in its table of them all."""
    if not _SQUARE:
        _SQUARE.append(_squares(np.arange(1 << 17, dtype=_I)))
    return _SQUARE[0][x]


def _interpolate(name: str, idx: Any, x: Any, sq: Any) -> Any:
    """The sum of :data:`_SHIFTS` on segments ``idx``, ``x`` and ``sq``, x's square."""
    c0k, c1, c2b, s = _TERMS[name]
    return (c0k[idx] + c1[idx] * x + c2b[idx] * sq) >> s


# RCP, RSQ, SQRT and EX2 look up what they need of the argument's sign and exponent in tables
# of its top 9 bits (``hi``), and the interpolated significand ``m`` (2**23 <= m <= 2**24)
# lands on a result's exponent ``E`` as ``((E - 1) << 23) + m``, its carry included. What
# only special arguments need (zeros, infinities, NaNs, results out of range) is computed
# only where one of the 32 is one (``_RARE``); ``_FIX`` is then the result of each ``hi``
# whose result is one value (-1: none). LG2, SIN and COS take the same tables and masks, and
# truncate their fixed-point sums to 24 significant bits through a double (exact below 2**53).
_E, _SIGN = np.arange(512, dtype=_I) & 0xFF, np.arange(512, dtype=_I) >> 8
_HALF = (_E - 127) >> 1  # half the unbiased exponent, rounded down (RSQ, SQRT)
_PARITY = ((_E - 127) & 1) << 23  # the exponent's parity above the fraction (RSQ, SQRT)
_INF, _NONE = 0xFF << 23, -1
_RARE = {
    "RCP": (_E == 0) | (_E >= 253),
    "RSQ": (_E == 0) | (_E == 0xFF) | (_SIGN == 1),
    "EX2": _E >= 133,  # |x| >= 64: 2**x may be out of range
    "SIN": _E == 0xFF,
}
_RARE["SQRT"] = _RARE["LG2"] = _RARE["RSQ"]
_FIX = {
    "RCP": np.select([_E == 0, _E == 0xFF], [(_SIGN << 31) | _INF, _SIGN << 31], _NONE),
    "RSQ": np.select([_E == 0, _SIGN == 1, _E == 0xFF], [(_SIGN << 31) | _INF, NAN, 0], _NONE),
    "SQRT": np.select([_E == 0, _SIGN == 1, _E == 0xFF], [_SIGN << 31, NAN, _INF], _NONE),
    "EX2": np.select([_E >= 134], [np.where(_SIGN == 1, 0, _INF)], _NONE),
    "LG2": np.select([_E == 0, _SIGN == 1, _E == 0xFF], [0xFF800000, NAN, _INF], _NONE),
    "SIN": np.where(_E == 0xFF, NAN, _NONE),
}
#: ``(E - 1) << 23`` of each function's result exponent E
_BASE = {
    "RCP": (252 - _E) << 23,
    "RSQ": (125 - _HALF) << 23,
    "SQRT": (126 + _HALF) << 23,
}
_EX2_SHIFT = np.clip(134 - _E, 0, 63)  # the 24-bit significand << 7 >> this: |x| in 7.23
_EX2_SIGN = 1 - 2 * _SIGN
_LG2_BASE = (_E - 127) << 36  # the exponent in LG2's fixed point
_LG2_BIAS = (1023 + 36 - 127) << 23  # a double's exponent bias over a float32 result's
_SINE_SHIFT = np.clip(150 - _E, 0, 63)  # the significand << 25 >> this: quarter turns
_SINE_BIAS = (1023 + 37 - 127) << 23  # as _LG2_BIAS, SIN being in 2**-37


def _finish(name: str, u: Any, hi: Any, mag: Any, sign: Any = 0) -> Any:
    """float32 bits of the results ``mag | sign`` (int64) of arguments ``u``: a magnitude
    below the smallest normal a zero, :data:`_FIX` where it has one, a NaN argument's
    :data:`NAN`."""
    if not np.count_nonzero(_RARE[name][hi]):
        return (mag | sign).astype(_U)
    out = np.where(mag < 1 << 23, 0, mag) | sign
    fix = _FIX[name][hi]
    out = np.where(fix >= 0, fix, out)
    return np.where(u & 0x7FFFFFFF > 0x7F800000, NAN, out).astype(_U)


def rcp(bits: Any) -> Any:
    """``MUFU.RCP``: 1/x; 1/±0 = ±inf, 1/±inf = ±0."""
    u = np.asarray(bits, dtype=_U).astype(_I)
    hi, x = u >> 23, u & 0xFFFF
    m = _interpolate("RCP", (u >> 16) & 0x7F, x, square(x << 1))  # x squared as 17 bits
    return _finish("RCP", u, hi, _BASE["RCP"][hi] + m, u & (1 << 31))


def _root(name: str, bits: Any) -> Any:
    """RSQ or SQRT: the table's index and argument are the exponent's parity above the
    fraction; an exact power of four (an all-zero index and argument) has its exact root."""
    u = np.asarray(bits, dtype=_U).astype(_I)
    hi = u >> 23
    frac = (u & 0x7FFFFF) | _PARITY[hi]
    x = frac & 0x1FFFF
    m = _interpolate(name, frac >> 17, x, square(x))
    if name == "RSQ":
        m += frac == 0  # 2**24 - 1 there: the exact root is 2**24, one exponent up
    return _finish(name, u, hi, _BASE[name][hi] + m)


def rsq(bits: Any) -> Any:
    """``MUFU.RSQ``: 1/sqrt(x); ±0 gives ±inf, +inf +0, a negative number NaN; an exact power
    of four its exact root."""
    return _root("RSQ", bits)


def sqrt(bits: Any) -> Any:
    """``MUFU.SQRT``: ±0 gives ±0, +inf +inf, a negative number NaN."""
    return _root("SQRT", bits)


def ex2(bits: Any) -> Any:
    """``MUFU.EX2``: 2**x from x in 7.23 fixed point, truncated toward zero (past 2**7 an
    overflow: +inf, or +0 for a negative x); 2**-inf = +0, 2**inf = +inf. A negative
    ``x = -(w + f)`` is ``2**-(w + 1) * 2**(1 - f)``, the fraction's complement standing for
    ``1 - f``: ``v = -x`` in fixed point gives ``-(w + 1)`` and ``1 - f``, less one place."""
    u = np.asarray(bits, dtype=_U).astype(_I)
    hi = u >> 23
    v = ((((u & 0x7FFFFF) | 0x800000) << 7) >> _EX2_SHIFT[hi]) * _EX2_SIGN[hi]
    frac = np.maximum((v & 0x7FFFFF) - _SIGN[hi], 0)
    x = frac & 0x1FFFF
    m = _interpolate("EX2", frac >> 17, x, square(x))
    return _finish("EX2", u, hi, (v >> 23 << 23) + m + (126 << 23))


def lg2(bits: Any) -> Any:
    """``MUFU.LG2``: log2(x) in fixed point (2**-36), the exponent added, then truncated to
    24 significant bits (a negative sum by its ones' complement); ±0 gives -inf, +inf +inf,
    a negative number NaN, and 1 exactly 0. The sum (below 2**44) is exact as a double, whose
    bits shifted right by 29 are the truncated float32's, its exponent 2**36 too high."""
    u = np.asarray(bits, dtype=_U).astype(_I)
    hi, frac = u >> 23, u & 0x7FFFFF
    x = frac & 0x1FFFF
    r = _interpolate("LG2", frac >> 17, x, square(x)) * (u != 0x3F800000)
    total = r + _LG2_BASE[hi]
    ones = total >> 63  # -1 where the sum is negative
    double = (total ^ ones).astype(np.float64).view(_I)
    mag = np.maximum((double >> 29) - _LG2_BIAS, 0)  # a zero sum: 0
    return _finish("LG2", u, hi, mag, ones & (1 << 31))


def _sine(bits: Any, cosine: bool) -> Any:
    """``MUFU.SIN``/``MUFU.COS`` of an angle in turns (ptxas multiplies radians by 1/(2 pi),
    rounding toward zero, before it): the angle in quarter turns in 2.23 fixed point,
    truncated; the quarter picks the sign and whether the fraction runs backwards, one table
    (of sin on a quarter turn) serves both, and the result is truncated to 24 significant
    bits (as :func:`lg2`'s, through a double). NaN and ±inf give NaN."""
    u = np.asarray(bits, dtype=_U).astype(_I)
    hi = u >> 23
    q = (((u & 0x7FFFFF) | 0x800000) << 25) >> _SINE_SHIFT[hi]  # bits 24, 23: the quarter
    if cosine:
        q += 1 << 23
    frac = (q ^ ((q << 40) >> 63)) & 0x7FFFFF  # backwards in an odd quarter
    x = frac & 0x1FFFF
    total = _interpolate("SIN", frac >> 17, x, square(x))  # sin * 2**37
    mag = np.maximum((total.astype(np.float64).view(_I) >> 29) - _SINE_BIAS, 0)
    negative = (q << 7) if cosine else (q << 7) ^ u  # the quarter's high bit (^ the sign)
    return _finish("SIN", u, hi, mag, negative & (1 << 31))


def sin(bits: Any) -> Any:
    """``MUFU.SIN``: sin(2 pi x) (:func:`_sine`)."""
    return _sine(bits, False)


def cos(bits: Any) -> Any:
    """``MUFU.COS``: cos(2 pi x) (:func:`_sine`)."""
    return _sine(bits, True)
