import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/**
 * A Hive standalone metastore for iceduck's tests (tests/support/hive_metastore.py): the
 * transaction tables that lock() needs (HIVE_LOCKS, TXNS...) are created in the Derby
 * database first, as Hive's own schema scripts would, since DataNucleus creates only the
 * tables of its object model; then HiveMetaStore.main runs the Thrift server.
 */
public class MetastoreMain {
  public static void main(String[] args) throws Throwable {
    Configuration conf = MetastoreConf.newMetastoreConf();
    MetastoreConf.setVar(conf, MetastoreConf.ConfVars.CONNECT_URL_KEY, System.getProperty("iceduck.derby.url"));
    TxnDbUtil.prepDb(conf);
    HiveMetaStore.main(args);
  }
}
