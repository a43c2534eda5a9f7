"""One Verifier shared by 8 threads: every result right."""

import threading

import agentsig
from conftest import DOC


def test_eight_threads_share_one_verifier():
    keys = [agentsig.SigningKey.generate(alg) for alg in ("ES256", "EdDSA")]
    v = agentsig.Verifier(keys=keys)
    docs = [DOC.replace(b"planner", f"planner-{i}".encode()) for i in range(8)]
    sigs = [agentsig.sign_descriptor(d, keys[i % 2]) for i, d in enumerate(docs)]
    results = [[] for _ in range(8)]
    errors = []
    barrier = threading.Barrier(8)

    def work(i):
        try:
            barrier.wait()
            for n in range(40):
                # Every other call checks another thread's document with this
                # thread's signature: it must fail, and the others succeed.
                j = i if n % 2 == 0 else (i + 1) % 8
                try:
                    r = v.verify_descriptor(docs[j], sigs[i])
                    results[i].append((j == i, r.verified, r.signatures[0]["key"]["thumbprint"]))
                except agentsig.NotVerified as e:
                    results[i].append((j == i, False, e.code))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, rs in enumerate(results):
        assert len(rs) == 40
        for own, ok, detail in rs:
            assert ok == own
            if own:
                assert detail == keys[i % 2].thumbprint
            else:
                assert detail == "signature-mismatch"
