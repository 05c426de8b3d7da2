// HttpClient 5.4's TlsSocketStrategy, which Debian's HttpClient 5.2 lacks; Iceberg 1.10.2's
// HTTPClient only names the type (it hands a DefaultClientTlsStrategy to the pool builder).
package org.apache.iceberg.shaded.org.apache.hc.client5.http.ssl;

public interface TlsSocketStrategy {}
