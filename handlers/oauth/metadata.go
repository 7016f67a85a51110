package oauth

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// ServerMetadata is the RFC 8414 authorization server metadata document.
type ServerMetadata struct {
	Issuer                                 string   `json:"issuer"`
	AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
	TokenEndpoint                          string   `json:"token_endpoint"`
	RegistrationEndpoint                   string   `json:"registration_endpoint"`
	RevocationEndpoint                     string   `json:"revocation_endpoint"`
	ResponseTypesSupported                 []string `json:"response_types_supported"`
	ResponseModesSupported                 []string `json:"response_modes_supported"`
	GrantTypesSupported                    []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported []string `json:"revocation_endpoint_auth_methods_supported"`
	ScopesSupported                        []string `json:"scopes_supported"`
	ClientIDMetadataDocumentSupported      bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParameter      bool     `json:"authorization_response_iss_parameter_supported"`
	ResourceIndicatorsSupported            bool     `json:"resource_indicators_supported"`
	// SubjectTypesSupported is for clients that expect it; no ID tokens are issued.
	SubjectTypesSupported []string `json:"subject_types_supported"`
}

var authMethods = []string{store.AuthMethodNone, store.AuthMethodBasic, store.AuthMethodPost}

// Metadata returns the server's metadata document.
func (s *Server) Metadata() ServerMetadata {
	return ServerMetadata{
		Issuer:                                 s.issuer,
		AuthorizationEndpoint:                  s.base + "/authorize",
		TokenEndpoint:                          s.base + "/token",
		RegistrationEndpoint:                   s.base + "/register",
		RevocationEndpoint:                     s.base + "/revoke",
		ResponseTypesSupported:                 []string{"code"},
		ResponseModesSupported:                 []string{"query"},
		GrantTypesSupported:                    []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported:          []string{"S256"},
		TokenEndpointAuthMethodsSupported:      authMethods,
		RevocationEndpointAuthMethodsSupported: authMethods,
		ScopesSupported:                        store.AllScopes,
		ClientIDMetadataDocumentSupported:      s.metadataDocuments,
		AuthorizationResponseIssParameter:      true,
		ResourceIndicatorsSupported:            true,
		SubjectTypesSupported:                  []string{"public"},
	}
}

// ServeMetadata answers both well-known metadata paths with one document.
func (s *Server) ServeMetadata(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSON(http.StatusOK, s.Metadata())
}
