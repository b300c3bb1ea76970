import quiver as qv
import quiver.ipc as ipc


def test_smoke(s3):
    url = s3.url("a.arrow")
    t = qv.table({"a": qv.array(list(range(1000))), "b": qv.array([float(i) for i in range(1000)])})
    with ipc.new_file(url, t.schema, storage_options=s3.options) as w:
        w.write_table(t, max_chunksize=100)
    s3.reset_counts()
    with ipc.open_file(url, storage_options=s3.options) as r:
        got = r.read_all()
        print(r.io_stats, s3.counts())
    assert got.equals(t)
    s3.reset_counts()
    with ipc.open_file(url, storage_options=s3.options, columns=["b"]) as r:
        got = r.read_all()
        print(r.io_stats, s3.counts())
    assert got.column("b").equals(t.column("b"))
