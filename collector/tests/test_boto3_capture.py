"""boto3 capture: S3 calls and managed transfers on every client, Athena on SUCCEEDED only."""

import gc
import io
import weakref
from concurrent.futures import ThreadPoolExecutor

import lineage_collector as lc
import pytest
from lineage_collector.runtime import RUNTIME

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")
from botocore.stub import Stubber  # noqa: E402

ATHENA = "awsathena://athena.eu-west-1.amazonaws.com"


@pytest.fixture(autouse=True)
def _aws_credentials(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")


@pytest.fixture
def s3():
    with moto.mock_aws():
        client = boto3.client("s3", region_name="eu-west-1")
        for bucket in ("raw", "out"):
            client.create_bucket(
                Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
            )
        client.put_object(Bucket="raw", Key="orders/2026/11/29/part-0.json", Body=b"{}")
        yield client


def test_s3_reads_writes_and_copies_on_a_client_created_before_install(s3, captured):
    lc.uninstall_boto3()
    early = boto3.session.Session().client("s3", region_name="eu-west-1")
    lc.install_boto3()
    with lc.job("copy-orders"):
        early.get_object(Bucket="raw", Key="orders/2026/11/29/part-0.json")["Body"].read()
        s3.put_object(Bucket="out", Key="orders/dt=2026-11-29/part-0.parquet", Body=b"x")
        s3.copy_object(
            Bucket="out",
            Key="archive/orders/part-0.json",
            CopySource={"Bucket": "raw", "Key": "orders/2026/11/29/part-0.json"},
        )
        s3.head_object(Bucket="raw", Key="orders/2026/11/29/part-0.json")  # not lineage
        s3.list_objects_v2(Bucket="raw", Prefix="orders/")  # not lineage
    inputs, outputs = captured.io("copy-orders")
    assert inputs == {("s3://raw", "orders")}
    assert outputs == {("s3://out", "orders"), ("s3://out", "archive/orders")}


def test_managed_transfers_running_on_pool_threads_are_captured(s3, captured, tmp_path):
    source = tmp_path / "report.csv"
    source.write_text("a,b\n1,2\n")
    with lc.job("transfer"):
        s3.upload_file(str(source), "out", "reports/2026/11/report.csv")
        s3.download_file("raw", "orders/2026/11/29/part-0.json", str(tmp_path / "d.json"))
    inputs, outputs = captured.io("transfer")
    assert inputs == {("s3://raw", "orders")}
    assert outputs == {("s3://out", "reports")}


def test_failed_s3_calls_are_not_lineage(s3, captured):
    with lc.job("missing"), pytest.raises(s3.exceptions.NoSuchKey):
        s3.get_object(Bucket="raw", Key="nope/file.csv")
    assert captured.io("missing") == (set(), set())


def test_failed_managed_transfers_are_not_lineage(s3, captured, tmp_path):
    # The hook's docstring: a managed transfer is "reported when it succeeds".
    source = tmp_path / "report.csv"
    source.write_text("a\n1\n")
    with lc.job("failed-transfers"):
        with pytest.raises(Exception, match=r"404|Not Found"):
            s3.download_file("raw", "nope/2026/x.json", str(tmp_path / "x.json"))
        with pytest.raises(Exception, match=r"NoSuchBucket|does not exist"):
            s3.upload_file(str(source), "no-such-bucket", "reports/2026/report.csv")
    assert captured.io("failed-transfers") == (set(), set())


def athena_client():
    return boto3.client("athena", region_name="eu-west-1")


def execution(query_id: str, query: str, state: str, database: str = "sales") -> dict:
    return {
        "QueryExecution": {
            "QueryExecutionId": query_id,
            "Query": query,
            "StatementType": "DML",
            "QueryExecutionContext": {"Database": database, "Catalog": "AwsDataCatalog"},
            "ResultConfiguration": {"OutputLocation": f"s3://results/{query_id}.csv"},
            "Status": {"State": state},
        }
    }


def run_query(client, stubber, query_id: str, query: str, states: list[str]) -> None:
    stubber.add_response("start_query_execution", {"QueryExecutionId": query_id})
    for state in states:
        stubber.add_response("get_query_execution", execution(query_id, query, state))
    client.start_query_execution(QueryString=query, QueryExecutionContext={"Database": "sales"})
    for _ in states:
        client.get_query_execution(QueryExecutionId=query_id)


def test_athena_queries_are_lineage_only_when_they_succeed_and_union_in_a_job(captured):
    client = athena_client()
    with Stubber(client) as stubber, lc.job("athena"):
        run_query(
            client,
            stubber,
            "q1",
            "SELECT * FROM orders JOIN raw.customers c ON true",
            ["RUNNING", "SUCCEEDED"],
        )
        run_query(
            client, stubber, "q2", "CREATE TABLE daily AS SELECT * FROM orders", ["SUCCEEDED"]
        )
        run_query(client, stubber, "q3", "INSERT INTO audit SELECT * FROM failed_src", ["FAILED"])
        run_query(client, stubber, "q4", "INSERT INTO never SELECT * FROM polled", [])
        run_query(client, stubber, "q5", "INSERT INTO gone SELECT * FROM cancelled", ["CANCELLED"])
        run_query(
            client,
            stubber,
            "q6",
            "UNLOAD (SELECT * FROM orders) TO 's3://exports/orders/' WITH (format = 'PARQUET')",
            ["SUCCEEDED", "SUCCEEDED"],
        )
        run_query(
            client, stubber, "q7", "CREATE VIEW v_orders AS SELECT * FROM orders", ["SUCCEEDED"]
        )
    inputs, outputs = captured.io("athena")
    assert inputs == {
        (ATHENA, "AwsDataCatalog.sales.orders"),
        (ATHENA, "AwsDataCatalog.raw.customers"),
    }
    assert outputs == {
        (ATHENA, "AwsDataCatalog.sales.daily"),
        (ATHENA, "AwsDataCatalog.sales.v_orders"),
        ("s3://exports", "orders"),
    }


def test_athena_result_polled_outside_the_job_context_still_belongs_to_the_job(captured):
    client = athena_client()
    with Stubber(client) as stubber:
        stubber.add_response("start_query_execution", {"QueryExecutionId": "late"})
        stubber.add_response(
            "get_query_execution", execution("late", "INSERT INTO t2 SELECT * FROM t1", "SUCCEEDED")
        )
        with lc.job("starter"):
            client.start_query_execution(QueryString="INSERT INTO t2 SELECT * FROM t1")
            lc.flush(2)  # the START is processed before polling begins
            pool = ThreadPoolExecutor(1)
            pool.submit(client.get_query_execution, QueryExecutionId="late").result()
            pool.shutdown()
    inputs, outputs = captured.io("starter")
    assert inputs == {(ATHENA, "AwsDataCatalog.sales.t1")}
    assert outputs == {(ATHENA, "AwsDataCatalog.sales.t2")}


def test_parallel_athena_queries_in_a_pool_with_propagate(captured):
    client = athena_client()
    queries = {
        f"p{index}": f"INSERT INTO out_{index} SELECT * FROM in_{index}" for index in range(4)
    }
    with Stubber(client) as stubber:
        # The stubber answers in order, so queue start/get pairs and call them in pairs.
        for query_id, query in queries.items():
            stubber.add_response("start_query_execution", {"QueryExecutionId": query_id})
            stubber.add_response("get_query_execution", execution(query_id, query, "SUCCEEDED"))

        def run(item):
            query_id, query = item
            client.start_query_execution(QueryString=query)
            client.get_query_execution(QueryExecutionId=query_id)

        with lc.job("parallel"), ThreadPoolExecutor(1) as pool:
            list(pool.map(lc.propagate(run), queries.items()))
    inputs, outputs = captured.io("parallel")
    assert inputs == {(ATHENA, f"AwsDataCatalog.sales.in_{index}") for index in range(4)}
    assert outputs == {(ATHENA, f"AwsDataCatalog.sales.out_{index}") for index in range(4)}


def test_a_copy_source_is_named_like_the_object_it_names(s3, captured):
    # botocore rewrites CopySource in the caller's params to its URL-encoded header form
    # before the hook sees them, so "my folder" arrived as "my%20folder": another dataset.
    s3.put_object(Bucket="raw", Key="my folder/2026/x.json", Body=b"{}")
    with lc.job("copy-spaced"):
        s3.get_object(Bucket="raw", Key="my folder/2026/x.json")["Body"].read()
        s3.copy_object(Bucket="out", Key="copies/x.json", CopySource="raw/my folder/2026/x.json")
        s3.copy_object(
            Bucket="out",
            Key="copies/y.json",
            CopySource={"Bucket": "raw", "Key": "my folder/2026/x.json"},
        )
    inputs, outputs = captured.io("copy-spaced")
    assert inputs == {("s3://raw", "my folder")}
    assert outputs == {("s3://out", "copies")}


class Body(io.BytesIO):
    """An upload body that can be watched (bytes cannot be weakly referenced)."""


def test_a_queued_s3_call_does_not_keep_the_uploaded_body_alive(s3, captured, monkeypatch):
    # The queue holds up to LINEAGE_QUEUE_SIZE calls while the worker is busy or paused; a
    # call queued with its params kept every PutObject body alive until then (10,000 bodies
    # of a few MB is tens of GB), though the worker reads only the bucket and the key.
    monkeypatch.setattr(RUNTIME, "start_worker", lambda: None)  # nobody drains the queue
    RUNTIME.needs_start = False
    with lc.job("upload"):
        body = Body(b"x" * 1000)
        watched = weakref.ref(body)
        s3.put_object(Bucket="out", Key="orders/2026/x.parquet", Body=body)
        del body
        gc.collect()
        assert len(RUNTIME.queue) == 2  # the START and the call
        assert watched() is None


def test_s3_metadata_calls_are_lineage_only_when_asked_for(s3, captured):
    s3.put_object(Bucket="out", Key="old/2026/x.json", Body=b"{}")
    s3.put_object(Bucket="out", Key="older/2026/y.json", Body=b"{}")

    def metadata_calls(name: str) -> None:
        with lc.job(name):
            s3.head_object(Bucket="raw", Key="orders/2026/11/29/part-0.json")
            s3.list_objects_v2(Bucket="raw", Prefix="orders/")
            s3.delete_object(Bucket="out", Key="old/2026/x.json")
            s3.delete_objects(Bucket="out", Delete={"Objects": [{"Key": "older/2026/y.json"}]})

    metadata_calls("off")
    lc.install(
        transport=captured.transport,
        namespace="tests",
        flush_interval=0.01,
        capture_s3_metadata_calls=True,
    )
    s3.put_object(Bucket="out", Key="old/2026/x.json", Body=b"{}")
    s3.put_object(Bucket="out", Key="older/2026/y.json", Body=b"{}")
    metadata_calls("on")
    assert captured.io("off") == (set(), set())
    assert captured.io("on") == (
        {("s3://raw", "orders")},
        {("s3://out", "old"), ("s3://out", "older")},
    )


def test_an_athena_query_over_the_size_cap_is_not_kept_in_the_queue(captured, monkeypatch):
    # README: the queue holds "never a statement over the parser's 100,000-character cap".
    # A GetQueryExecution's answer was queued with its query (Athena takes 262,144
    # characters), which the worker then skipped: 10,000 slots held gigabytes till then.
    monkeypatch.setattr(RUNTIME, "start_worker", lambda: None)  # nobody drains the queue
    RUNTIME.needs_start = False
    huge = "INSERT INTO t2 SELECT * FROM t1 WHERE id IN (" + ",".join(["1"] * 60_000) + ")"
    client = athena_client()
    with Stubber(client) as stubber, lc.job("huge-athena"):
        run_query(client, stubber, "big", huge, ["SUCCEEDED"])
        run_query(client, stubber, "small", "INSERT INTO t3 SELECT * FROM t1", ["SUCCEEDED"])
        queued = [item for item in RUNTIME.queue if item[0] == "aws"]
        assert len(queued) == 4  # two starts, two answers
        kept = [
            item[4]["QueryExecution"]["Query"] for item in queued if item[2] == "GetQueryExecution"
        ]
        assert kept == ["", "INSERT INTO t3 SELECT * FROM t1"]
    assert lc.stats()["sql.skipped_too_large"] == 1


def test_multipart_uploads_select_and_managed_copies_are_captured(s3, captured):
    # README: SelectObjectContent is an input, CompleteMultipartUpload an output, and
    # s3transfer's copy (whose CopyObject runs on a pool thread) is source to target.
    s3.put_object(Bucket="raw", Key="people/2026/a.csv", Body=b"name\nalice\n")
    key = "big/dt=2026-12-07/part-0.bin"
    with lc.job("more-s3"):
        upload = s3.create_multipart_upload(Bucket="out", Key=key)
        part = s3.upload_part(
            Bucket="out", Key=key, PartNumber=1, UploadId=upload["UploadId"], Body=b"x" * 10
        )
        s3.complete_multipart_upload(
            Bucket="out",
            Key=key,
            UploadId=upload["UploadId"],
            MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]},
        )
        selected = s3.select_object_content(
            Bucket="raw",
            Key="people/2026/a.csv",
            Expression="select * from s3object",
            ExpressionType="SQL",
            InputSerialization={"CSV": {"FileHeaderInfo": "USE"}},
            OutputSerialization={"JSON": {}},
        )
        list(selected["Payload"])
        s3.copy({"Bucket": "raw", "Key": "orders/2026/11/29/part-0.json"}, "out", "copies/x.json")
    inputs, outputs = captured.io("more-s3")
    assert inputs == {("s3://raw", "people"), ("s3://raw", "orders")}
    assert outputs == {("s3://out", "big"), ("s3://out", "copies")}
