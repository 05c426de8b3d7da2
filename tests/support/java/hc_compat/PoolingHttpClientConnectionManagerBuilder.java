// The part of HttpClient 5.4's pool builder that Iceberg 1.10.2's HTTPClient calls
// (HTTPClient.configureConnectionManager), over HttpClient 5.2's pool. The TLS strategy is
// not applied: this class path serves plain-HTTP catalogs (the tests' loopback server).
package org.apache.iceberg.shaded.org.apache.hc.client5.http.impl.io;

import org.apache.iceberg.shaded.org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.iceberg.shaded.org.apache.hc.client5.http.ssl.TlsSocketStrategy;

public class PoolingHttpClientConnectionManagerBuilder {
  private ConnectionConfig connectionConfig;
  private int maxConnTotal;
  private int maxConnPerRoute;

  public static PoolingHttpClientConnectionManagerBuilder create() {
    return new PoolingHttpClientConnectionManagerBuilder();
  }

  public PoolingHttpClientConnectionManagerBuilder setDefaultConnectionConfig(ConnectionConfig config) {
    this.connectionConfig = config;
    return this;
  }

  public PoolingHttpClientConnectionManagerBuilder useSystemProperties() {
    return this;
  }

  public PoolingHttpClientConnectionManagerBuilder setMaxConnTotal(int max) {
    this.maxConnTotal = max;
    return this;
  }

  public PoolingHttpClientConnectionManagerBuilder setMaxConnPerRoute(int max) {
    this.maxConnPerRoute = max;
    return this;
  }

  public PoolingHttpClientConnectionManagerBuilder setTlsSocketStrategy(TlsSocketStrategy strategy) {
    return this;
  }

  public PoolingHttpClientConnectionManager build() {
    PoolingHttpClientConnectionManager manager = new PoolingHttpClientConnectionManager();
    if (connectionConfig != null) {
      manager.setDefaultConnectionConfig(connectionConfig);
    }
    if (maxConnTotal > 0) {
      manager.setMaxTotal(maxConnTotal);
    }
    if (maxConnPerRoute > 0) {
      manager.setDefaultMaxPerRoute(maxConnPerRoute);
    }
    return manager;
  }
}
